"""Reading a headless-server request body as a JSON object, refusing bad input with a 4xx.

Every way a body can be bad ends in an ``HTTPException`` the server answers as one JSON error
(and one log line): too large (413), too slow (408), cut off by the client (400), not JSON,
nested too deeply or holding a lone UTF-16 surrogate that no store can save (400).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

__all__ = ["MAX_JSON_DEPTH", "check_json", "read_json"]

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects a body may have (no route needs more than 3)."""


async def read_json(
    request: Request, *, max_bytes: int, body_timeout: float, optional: bool = False
) -> dict[str, Any]:
    """The request body as a JSON object.

    Args:
        request: the request.
        max_bytes: larger bodies get 413 (a declared ``Content-Length`` is checked first).
        body_timeout: seconds the whole body may take to arrive; then 408.
        optional: an empty body is ``{}`` instead of an error.

    Raises:
        HTTPException: the body is refused (the status and reason as above).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise HTTPException(413, f"request body over {max_bytes} bytes")
    body = bytearray()
    try:
        async with asyncio.timeout(body_timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_bytes:
                    raise HTTPException(413, f"request body over {max_bytes} bytes")
    except TimeoutError:
        raise HTTPException(408, f"the request body took longer than {body_timeout:g} s") from None
    except ClientDisconnect:
        raise HTTPException(400, "the client closed the connection before the body ended") from None
    if not body and optional:
        return {}
    try:
        data = json.loads(body)
    except RecursionError:
        raise HTTPException(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "the body must be a JSON object")
    check_json(data)
    return data


def check_json(data: Any) -> None:
    """Refuse JSON nested deeper than ``MAX_JSON_DEPTH`` or with a lone surrogate (``\\ud800``:
    valid JSON, but not text; no UTF-8 store can save it). Iterative: no recursion limit.

    Raises:
        HTTPException: 400 naming the problem.
    """
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value)
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_JSON_DEPTH:
            raise HTTPException(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                stack.append((item, depth + 1))
        else:
            stack.extend((item, depth + 1) for item in value)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise HTTPException(
            400, "the body has a lone UTF-16 surrogate (such as \\ud800), which is not text"
        ) from None
