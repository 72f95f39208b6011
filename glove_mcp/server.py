"""Headless server mode: an HTTP service running one agent per session.

Routes (every one requires ``Authorization: Bearer <api key>``):

- ``POST /sessions`` → ``201 {"id": …}`` (optional body ``{"id": "…"}``)
- ``POST /sessions/{id}/messages`` with ``{"text": "…"}`` → a Server-Sent Events stream:
  ``text_delta``, ``tool_use``, ``tool_result``, then ``final`` (or ``error``)
- ``POST /sessions/{id}/events`` with ``{"id", "source", "kind", "content", "when_idle"?,
  "expires_at"?}`` → ``{"disposition": …}`` (maps to ``Glove.emit_event``)
- ``GET /sessions/{id}`` → ``{"id": …, "messages": […]}``

Sessions live in one SQLite file and survive a restart: an unknown id is looked up there before
the server answers 404. Requests to one session take turns; different sessions run
concurrently. Bad input gets a 4xx JSON error; nothing answers with a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from glove_core import Glove, GloveError, SqliteStore
from glove_core.errors import EventQueueFullError, EventTooLargeError, StoreNotFoundError
from glove_core.subscribers import SubscriberEvent, TextDelta, ToolUse, ToolUseResult
from glove_core.types import new_id

__all__ = ["AgentFactory", "HeadlessServer"]

logger = logging.getLogger(__name__)

AgentFactory = Callable[[str, SqliteStore, AsyncExitStack], "Glove | Awaitable[Glove]"]
"""``factory(session_id, store, stack)`` builds a session's agent on ``store``; resources it
opens (an MCP mount, say) go on ``stack``, which the server closes at shutdown."""

_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_WHEN_IDLE = ("auto", "wake", "defer")


@dataclass
class _Session:
    glove: Glove
    store: SqliteStore
    stack: AsyncExitStack
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class HeadlessServer:
    """The HTTP service. ``server.app`` is a Starlette app to run with uvicorn.

    Args:
        db_path: the SQLite file holding every session's conversation.
        api_key: the bearer key every request must carry; required.
        agent_factory: builds a session's agent (see ``AgentFactory``); it should pass
            ``server_mode=True`` to ``Glove``.
        max_body_bytes: larger request bodies are refused with 413.

    Raises:
        ValueError: no API key was given (a server without one would be open to anyone).
    """

    def __init__(
        self,
        db_path: str,
        api_key: str,
        agent_factory: AgentFactory,
        *,
        max_body_bytes: int = 256 * 1024,
    ) -> None:
        if not api_key or not api_key.strip():
            raise ValueError(
                "the headless server needs an API key: pass api_key= (glove-mcp serve reads "
                "GLOVE_API_KEY); it refuses to start without one"
            )
        self._db_path = db_path
        self._api_key = api_key.encode()
        self._factory = agent_factory
        self._max_body = max_body_bytes
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[str, asyncio.Lock] = {}
        self.app = Starlette(
            routes=[
                Route("/sessions", self._create, methods=["POST"]),
                Route("/sessions/{id}", self._history, methods=["GET"]),
                Route("/sessions/{id}/messages", self._message, methods=["POST"]),
                Route("/sessions/{id}/events", self._event, methods=["POST"]),
            ],
            exception_handlers={HTTPException: self._http_error, Exception: self._crash},
            lifespan=self._lifespan,
        )

    def __repr__(self) -> str:
        return f"<HeadlessServer db={self._db_path!r} sessions={len(self._sessions)}>"

    # -- plumbing ---------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close every session's resources and store."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            try:
                await session.glove.aclose()
                await session.stack.aclose()
            finally:
                await session.store.aclose()

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, exc.detail)

    async def _crash(self, request: Request, exc: Exception) -> Response:
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(500, "internal error; the server log has the details")

    def _authorize(self, request: Request) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.encode(), self._api_key):
            raise HTTPException(401, "missing or wrong API key: send Authorization: Bearer <key>")

    async def _json(self, request: Request, *, optional: bool = False) -> dict[str, Any]:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_body:
            raise HTTPException(413, f"request body over {self._max_body} bytes")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > self._max_body:
                raise HTTPException(413, f"request body over {self._max_body} bytes")
        if not body and optional:
            return {}
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise HTTPException(400, "the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise HTTPException(400, "the body must be a JSON object")
        return data

    async def _session(self, session_id: str, *, create: bool = False) -> _Session:
        if not _SESSION_ID.match(session_id):
            raise HTTPException(400, "a session id is 1-128 characters from [A-Za-z0-9_.:-]")
        existing = self._sessions.get(session_id)
        if existing is not None:
            return existing
        async with self._opening.setdefault(session_id, asyncio.Lock()):
            existing = self._sessions.get(session_id)
            if existing is not None:
                return existing
            if not create and session_id not in await self._known_sessions():
                raise HTTPException(404, f"no session {session_id!r}")
            store = SqliteStore(self._db_path, session_id)
            stack = AsyncExitStack()
            try:
                if create:
                    await store.reset_counters()  # records the session in the file
                glove = self._factory(session_id, store, stack)
                if inspect.isawaitable(glove):
                    glove = await glove
                glove.build()
            except BaseException:
                await stack.aclose()
                await store.aclose()
                raise
            session = _Session(glove, store, stack)
            self._sessions[session_id] = session
            return session

    async def _known_sessions(self) -> set[str]:
        try:
            return {s.session_id for s in await SqliteStore.list_sessions(self._db_path)}
        except StoreNotFoundError:
            return set()  # no session was ever created

    # -- routes -----------------------------------------------------------------------------

    async def _create(self, request: Request) -> Response:
        self._authorize(request)
        body = await self._json(request, optional=True)
        session_id = body.get("id", new_id("sess_"))
        if not isinstance(session_id, str):
            raise HTTPException(400, "'id' must be a string")
        if session_id in self._sessions or session_id in await self._known_sessions():
            raise HTTPException(409, f"session {session_id!r} already exists")
        await self._session(session_id, create=True)
        return JSONResponse({"id": session_id}, status_code=201)

    async def _history(self, request: Request) -> Response:
        self._authorize(request)
        session = await self._session(request.path_params["id"])
        messages = await session.store.get_messages()
        return JSONResponse(
            {
                "id": request.path_params["id"],
                "messages": [m.model_dump(mode="json", exclude_none=True) for m in messages],
            }
        )

    async def _event(self, request: Request) -> Response:
        self._authorize(request)
        body = await self._json(request)
        session = await self._session(request.path_params["id"])
        missing = [k for k in ("id", "source", "kind", "content") if not body.get(k)]
        if missing:
            raise HTTPException(400, f"missing event field(s): {', '.join(missing)}")
        when_idle = body.get("when_idle", "auto")
        if when_idle not in _WHEN_IDLE:
            raise HTTPException(400, f"when_idle must be one of {', '.join(_WHEN_IDLE)}")
        expires_at = None
        if body.get("expires_at") is not None:
            try:
                expires_at = datetime.fromisoformat(str(body["expires_at"]))
            except ValueError:
                raise HTTPException(400, "expires_at must be an ISO 8601 date-time") from None
            if expires_at.tzinfo is None:
                raise HTTPException(400, "expires_at needs a timezone (e.g. ...Z or +00:00)")
        for name in ("id", "source", "kind", "content"):
            if not isinstance(body[name], str):
                raise HTTPException(400, f"event field {name!r} must be a string")
        try:
            disposition = await session.glove.emit_event(
                id=body["id"],
                source=body["source"],
                kind=body["kind"],
                content=body["content"],
                when_idle=when_idle,
                expires_at=expires_at,
            )
        except EventTooLargeError as exc:
            raise HTTPException(413, str(exc)) from None
        except EventQueueFullError as exc:
            raise HTTPException(429, str(exc)) from None  # the sender retries later
        return JSONResponse({"disposition": disposition})

    async def _message(self, request: Request) -> Response:
        self._authorize(request)
        body = await self._json(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise HTTPException(400, "'text' must be a non-empty string")
        session = await self._session(request.path_params["id"])
        return StreamingResponse(
            self._stream(session, text),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _stream(self, session: _Session, text: str) -> AsyncIterator[str]:
        queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        forwarder = _SseForwarder(queue)

        async def run() -> None:
            try:
                async with session.lock:
                    session.glove.add_subscriber(forwarder)
                    try:
                        result = await session.glove.process_request(text)
                    finally:
                        session.glove.remove_subscriber(forwarder)
                usage = result.usage.model_dump()
                await queue.put(("final", {"text": result.text, "usage": usage}))
            except GloveError as exc:
                await queue.put(("error", {"error": f"{type(exc).__name__}: {exc}"}))
            except Exception:
                logger.exception("a session request failed")
                await queue.put(("error", {"error": "internal error; see the server log"}))
            finally:
                await queue.put(None)

        # The turn runs to completion even if the client goes away, so history stays whole.
        task = asyncio.create_task(run())
        try:
            while (item := await queue.get()) is not None:
                name, data = item
                yield f"event: {name}\ndata: {json.dumps(data, default=str)}\n\n"
        finally:
            if not task.done():
                task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)


class _SseForwarder:
    """Turns a session's subscriber events into SSE items."""

    def __init__(self, queue: asyncio.Queue[tuple[str, dict[str, Any]] | None]) -> None:
        self._queue = queue

    async def record(self, event: SubscriberEvent) -> None:
        if isinstance(event, TextDelta):
            await self._queue.put(("text_delta", {"text": event.text}))
        elif isinstance(event, ToolUse):
            await self._queue.put(
                ("tool_use", {"id": event.id, "name": event.name, "input": event.input})
            )
        elif isinstance(event, ToolUseResult):
            result = event.result
            await self._queue.put(
                (
                    "tool_result",
                    {
                        "call_id": event.call_id,
                        "name": event.name,
                        "status": result.status,
                        "data": result.data,
                        "message": result.message,
                    },
                )
            )
