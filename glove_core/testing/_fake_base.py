"""What the fake model APIs share: the recorded requests, the script, and error capture."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from glove_core.testing._script import FakeItem, Responder

__all__ = ["DroppedConnection", "FakeAPIBase", "RecordedRequest"]


class DroppedConnection(Exception):
    """Raised inside a streaming body so uvicorn aborts the connection mid-response."""


@dataclass
class RecordedRequest:
    """One request the fake received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int = 200
    """The HTTP status the fake answered with."""
    usage: dict[str, Any] | None = None
    """The usage the fake reported (None for an error)."""
    outcome: str = "reply"
    """``reply``, ``error``, ``invalid``, ``drop`` or ``stall``."""

    @property
    def stream(self) -> bool:
        """True when the client asked for SSE."""
        return bool(self.body.get("stream"))

    def cache_control_paths(self) -> list[str]:
        """Where the request put ``cache_control``: ``tools.N``, ``system.N`` or
        ``messages.N.content.M``, in request order."""
        paths: list[str] = []
        for i, tool in enumerate(self.body.get("tools") or []):
            if tool.get("cache_control"):
                paths.append(f"tools.{i}")
        system = self.body.get("system")
        if isinstance(system, list):
            paths.extend(f"system.{i}" for i, b in enumerate(system) if b.get("cache_control"))
        for i, message in enumerate(self.body.get("messages") or []):
            content = message.get("content")
            if isinstance(content, list):
                paths.extend(
                    f"messages.{i}.content.{j}"
                    for j, b in enumerate(content)
                    if isinstance(b, dict) and b.get("cache_control")
                )
        return paths


@dataclass
class FakeAPIBase:
    """The script, the recorded requests and the captured server errors of a fake API.

    Args:
        default_reply: the answer when the script is empty and no ``responder`` is set.
        responder: builds an answer from the request body when the script is empty.
    """

    default_reply: FakeItem = "ok"
    responder: Responder | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    base_url: str = ""
    server_errors: list[Exception] = field(default_factory=list)
    _script: list[FakeItem] = field(default_factory=list, init=False, repr=False)
    _ids: int = field(default=0, init=False)

    def script(self, *items: FakeItem) -> None:
        """Queue answers, used in order, one per request."""
        self._script.extend(items)

    @property
    def pending(self) -> int:
        """How many scripted answers are left."""
        return len(self._script)

    def _next_item(self, body: dict[str, Any]) -> FakeItem:
        if self._script:
            return self._script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return self.default_reply

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids:06d}"

    async def _record(self, request: Request) -> tuple[RecordedRequest, Any]:
        """Record the request; return the record and the body as parsed (``{}`` if not JSON)."""
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = {}
        record = RecordedRequest(request.url.path, headers, body if isinstance(body, dict) else {})
        self.requests.append(record)
        return record, body

    async def _guarded(
        self, handle: Callable[[Request], Awaitable[Response]], request: Request
    ) -> Response:
        try:
            return await handle(request)
        except Exception as exc:
            # Kept so the test fails with the fake's own bug, not with a retried 500.
            self.server_errors.append(exc)
            raise
