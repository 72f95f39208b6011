"""Answering an MCP server's ``elicitation/create``: who answers, and checking what they say.

A server asks for input in one of two modes: ``"form"`` (fields described by a restricted JSON
Schema) or ``"url"`` (a page the person should open, for what must not pass through the client).
``answer_elicitation`` turns the SDK's request parameters into a plain request dict and asks, in
this order:

1. ``on_elicitation(request)``, when the application gave one (sync or async);
2. a person, through the ``DisplayManager``: a ``push_and_wait`` slot whose renderer is
   ``ELICITATION_RENDERER`` and whose input is the request dict, resolved with the answer dict —
   unless the agent runs in server mode, where nobody is there to answer;
3. nobody: the request is declined, and the reason logged at INFO.

The request dict has ``server`` (the catalogue id), ``mode``, ``message``, and either
``requested_schema`` (form mode) or ``url`` and, when the server gave one, ``elicitation_id``
(URL mode). A slot shown again after an answer that did not fit also has ``error``, saying what
was wrong. The answer is ``{"action": "accept" | "decline" | "cancel", "content": {...}}``;
``content`` matters only when a form is accepted. In URL mode, accepting means the person opened
(or agreed to open) the page.

An accepted form gets the schema's defaults for every field it left out (SEP-1034), then is
checked against the schema: types, enum choices, string formats and lengths, number bounds,
required fields, no unknown fields. A person is asked again (up to three times, then the answer
is ``cancel``); a handler's answer that does not fit is logged and reported to the server as an
invalid-params error naming the field. A request never hangs: ``timeout`` bounds the wait, after
which the answer is ``cancel``, and a handler that raises becomes an error answer, never an
exception inside the SDK.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types

from glove_core import DisplayManager
from glove_mcp.connect.display_text import clean_text, page_url
from glove_mcp.connect.elicitation_schema import FormError, FormField, SchemaError, complete_content
from glove_mcp.connect.elicitation_schema import parse_form as _parse_form

__all__ = [
    "DEFAULT_ELICITATION_TIMEOUT",
    "ELICITATION_RENDERER",
    "OnElicitation",
    "answer_elicitation",
]

logger = logging.getLogger(__name__)

ELICITATION_RENDERER = "mcp_elicitation"
"""The renderer of the display slot that asks a person to answer an elicitation."""

DEFAULT_ELICITATION_TIMEOUT = 600.0
"""Seconds ``answer_elicitation`` waits for an answer before it answers ``cancel``."""

OnElicitation = Callable[[dict[str, Any]], Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
"""Answers an elicitation instead of the display manager: takes the request dict, returns (or
resolves to) the answer dict. A sync handler runs on the event loop, so keep it quick."""

_MAX_TRIES = 3
_ACTIONS = ("accept", "decline", "cancel")
_ANSWER_SHAPE = "{'action': 'accept' | 'decline' | 'cancel', 'content': {...}}"


def _request(server: str, params: types.ElicitRequestParams) -> dict[str, Any]:
    """What a handler, a person or the web page is shown: the server's texts without control
    and format characters; for a URL, the page (http/https only) and its host on its own.

    Raises:
        ValueError: a URL a person must not be asked to open (the message says why).
    """
    message = clean_text(params.message)
    request: dict[str, Any] = {"server": server, "mode": params.mode, "message": message}
    if isinstance(params, types.ElicitRequestURLParams):
        request["url"], request["host"] = page_url(params.url)
        if params.elicitation_id is not None:
            request["elicitation_id"] = params.elicitation_id
    else:
        request["requested_schema"] = _cleaned_labels(copy.deepcopy(params.requested_schema))
    return request


def _cleaned_labels(schema: Any) -> Any:
    """The schema with its titles and descriptions cleaned (values such as enums untouched:
    an answer must still match them)."""
    if isinstance(schema, dict):
        return {
            key: clean_text(value)
            if key in ("title", "description") and isinstance(value, str)
            else _cleaned_labels(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_cleaned_labels(item) for item in schema]
    return schema


def _read_answer(answer: Any, fields: list[FormField] | None) -> types.ElicitResult:
    """The answer as the SDK's result; ``fields`` is None in URL mode.

    Raises:
        FormError: the answer is not an answer dict, or its form content does not fit.
    """
    if not isinstance(answer, Mapping):
        raise FormError(f"the answer must be a dict {_ANSWER_SHAPE}, got {type(answer).__name__}")
    action = answer.get("action")
    if action not in _ACTIONS:
        raise FormError(f"the answer's action must be 'accept', 'decline' or 'cancel' ({action!r})")
    if action != "accept" or fields is None:
        # Content only travels with an accepted form; a URL answer never carries any.
        return types.ElicitResult(action=action)
    return types.ElicitResult(
        action="accept", content=complete_content(fields, answer.get("content"))
    )


def _invalid(server: str, exc: FormError) -> types.ErrorData:
    logger.warning(
        "on_elicitation answered an elicitation of MCP server %r with an answer that does not "
        "fit: %s; the server gets an invalid-params error",
        server,
        exc,
    )
    return types.ErrorData(
        code=types.INVALID_PARAMS,
        message=f"invalid elicitation answer: {exc}",
        data={"field": exc.field} if exc.field else None,
    )


async def _ask_handler(
    on_elicitation: OnElicitation,
    request: dict[str, Any],
    fields: list[FormField] | None,
    limit: float | None,
) -> types.ElicitResult | types.ErrorData:
    server = request["server"]
    scope = asyncio.timeout(limit)
    try:
        async with scope:
            answer: Any = on_elicitation(copy.deepcopy(request))
            if inspect.isawaitable(answer):
                answer = await answer
    except Exception as exc:
        if isinstance(exc, TimeoutError) and scope.expired():
            logger.warning(
                "on_elicitation did not answer MCP server %r within %s s; answering cancel",
                server,
                limit,
            )
            return types.ElicitResult(action="cancel")
        # The traceback stays in our log: the server only learns that the handler failed.
        logger.error(
            "on_elicitation raised on an elicitation of MCP server %r; the server gets an error",
            server,
            exc_info=True,
        )
        return types.ErrorData(
            code=types.INTERNAL_ERROR,
            message=f"the client's elicitation handler failed ({type(exc).__name__})",
        )
    try:
        return _read_answer(answer, fields)
    except FormError as exc:
        return _invalid(server, exc)


async def _ask_person(
    display: DisplayManager,
    request: dict[str, Any],
    fields: list[FormField] | None,
    limit: float | None,
) -> types.ElicitResult:
    server = request["server"]
    shown = request
    try:
        async with asyncio.timeout(limit):
            for _ in range(_MAX_TRIES):
                try:
                    # A copy each time: whatever the application does to the input stays there.
                    answer = await display.push_and_wait(ELICITATION_RENDERER, copy.deepcopy(shown))
                except Exception as exc:
                    logger.info(
                        "the application rejected the elicitation slot of MCP server %r (%s); "
                        "answering cancel",
                        server,
                        type(exc).__name__,
                    )
                    return types.ElicitResult(action="cancel")
                try:
                    return _read_answer(answer, fields)
                except FormError as exc:
                    logger.debug("elicitation answer for %r did not fit: %s", server, exc)
                    shown = {**request, "error": str(exc)}
    except TimeoutError:
        # Leaving the timeout scope cancelled push_and_wait, which removed the slot.
        logger.info(
            "nobody answered the elicitation of MCP server %r within %s s; answering cancel",
            server,
            limit,
        )
        return types.ElicitResult(action="cancel")
    logger.info(
        "%d answers to the elicitation of MCP server %r did not fit its form; answering cancel",
        _MAX_TRIES,
        server,
    )
    return types.ElicitResult(action="cancel")


async def answer_elicitation(
    server: str,
    params: types.ElicitRequestParams,
    *,
    on_elicitation: OnElicitation | None,
    display: DisplayManager | None,
    server_mode: bool,
    timeout: float | None = DEFAULT_ELICITATION_TIMEOUT,  # noqa: ASYNC109 - a fixed public name
) -> types.ElicitResult | types.ErrorData:
    """Answer one ``elicitation/create`` of ``server``, for a ``ClientSession``'s
    ``elicitation_callback``.

    Args:
        server: the server's id, shown to whoever answers and named in logs.
        params: the request's parameters, form (``ElicitRequestFormParams``) or URL
            (``ElicitRequestURLParams``).
        on_elicitation: answers instead of the display manager when given.
        display: where a person is asked, unless ``server_mode``.
        server_mode: no person is there; without ``on_elicitation`` the request is declined.
        timeout: seconds to wait for ``on_elicitation`` or a person (None: no limit); when it
            runs out the answer is ``cancel`` and the slot is removed.

    Returns:
        The result for the server, or an error answer: the schema is not a restricted
        elicitation schema, ``on_elicitation`` raised, or its answer does not fit the form.

    Raises:
        ValueError: ``timeout`` is not a positive number of seconds or None.
    """
    if timeout is not None and not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    try:
        request = _request(server, params)
    except ValueError as exc:
        logger.warning("refused a URL elicitation of MCP server %r: %s (declined)", server, exc)
        return types.ElicitResult(action="decline")
    fields: list[FormField] | None = None
    if isinstance(params, types.ElicitRequestFormParams):
        try:
            fields = _parse_form(params.requested_schema)
        except SchemaError as exc:
            logger.warning("refused an elicitation of MCP server %r: %s", server, exc)
            return types.ErrorData(
                code=types.INVALID_PARAMS,
                message=f"unsupported elicitation: {exc}",
                data={"field": exc.field} if exc.field else None,
            )
    if on_elicitation is not None:
        return await _ask_handler(on_elicitation, request, fields, timeout)
    if display is not None and not server_mode:
        return await _ask_person(display, request, fields, timeout)
    reason = (
        "the agent runs in server mode (no person to ask)"
        if server_mode
        else "there is no display manager to ask a person through"
    )
    logger.info(
        "declined an elicitation of MCP server %r: no on_elicitation handler and %s; pass "
        "on_elicitation= to answer it",
        server,
        reason,
    )
    return types.ElicitResult(action="decline")
