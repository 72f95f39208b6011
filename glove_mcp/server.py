"""Headless server mode: an HTTP service running one agent per session.

Routes (every one requires ``Authorization: Bearer <api key>``):

- ``POST /sessions`` → ``201 {"id": …}`` (optional body ``{"id": "…"}``); ``409`` when the id
  exists — of concurrent creations of one id, even by servers sharing the file, one wins
- ``POST /sessions/{id}/messages`` with ``{"text": "…"}`` → a Server-Sent Events stream:
  ``text_delta``, ``tool_use``, ``tool_result``, then ``final`` (or ``error``)
- ``POST /sessions/{id}/events`` with ``{"id", "source", "kind", "content", "when_idle"?,
  "expires_at"?}`` → ``{"disposition": …}`` (maps to ``Glove.emit_event``)
- ``GET /sessions/{id}`` → ``{"id": …, "messages": […]}``
- ``GET /sessions`` (a page), ``DELETE /sessions/{id}``, ``GET /sessions/{id}/events`` (follow
  the session: its woken turns too), ``GET /sessions/{id}/slots`` and ``POST
  /sessions/{id}/slots/{slot_id}`` (answer what the agent asks a person): ``_server_sessions``
- with ``web=True``, ``GET /`` is a chat page on the same API (``_server_web``); every request
  gets one line on the ``glove_mcp.access`` logger (``_access_log``)

Stream items name the agent they come from (``"agent": "main"`` or the subagent's name), and
an ``error`` item is bounded: ``_server_sse``.

Sessions live in one SQLite file and survive a restart: an unknown id is looked up there (one
primary-key lookup, whatever the number of sessions) before the server answers 404. Requests
to one session take turns; different sessions run concurrently. At most ``max_sessions`` idle
sessions stay open (``_session_cache``); others are closed and reopened from the file on their
next request. Bad input gets a 4xx JSON error and one log line; nothing answers with a
traceback. A server out of file descriptors answers 503 and logs that once per 10 s.

With ``database_url=`` the sessions live in PostgreSQL instead, and any number of instances
behind a load balancer serve any session (``glove-mcp serve --database postgresql://…``).

Run ``server.app`` with ``uvicorn_config(server.app, HttpLimits(...))``: it adds the
connection limits (header deadline, keep-alive, connection cap) the app cannot enforce itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from glove_core import AbortController, Glove, GloveError, Slot
from glove_core.errors import EventQueueFullError, EventTooLargeError
from glove_core.subscribers import SubscriberEvent
from glove_core.types import new_id
from glove_mcp._access_log import ACCESS_LOGGER, AccessLog
from glove_mcp._http_limits import HttpLimits, uvicorn_config
from glove_mcp._out_of_files import OncePer, out_of_files, quiet_accept_errors, quiet_refusals
from glove_mcp._request_body import read_json
from glove_mcp._server_database import (
    DatabaseOptions,
    session_storage,
    storage_closer,
    storage_opener,
)
from glove_mcp._server_sessions import SESSION_ID, SessionRoutes
from glove_mcp._server_sse import SseItem, error_data, event_item, frame
from glove_mcp._server_stream import Relays, slot_json
from glove_mcp._server_web import web_routes
from glove_mcp._session_cache import (
    CachedSession,
    SessionCache,
    SessionOpenError,
    default_max_sessions,
)
from glove_mcp._session_storage import SessionStorage, SessionStore

if TYPE_CHECKING:
    from glove_core.postgres import PostgresDatabase

__all__ = [
    "ACCESS_LOGGER",
    "AgentFactory",
    "HeadlessServer",
    "HttpLimits",
    "SessionStore",
    "uvicorn_config",
]

logger = logging.getLogger(__name__)

AgentFactory = Callable[[str, SessionStore, AsyncExitStack], "Glove | Awaitable[Glove]"]
"""``factory(session_id, store, stack)`` builds a session's agent on ``store`` (a
``SqliteStore``, or a ``PostgresStore`` with ``database_url=``); resources it opens (an MCP
mount, an event queue) go on ``stack``, which the server closes when it closes the session
(idle, or at shutdown). It runs again when a closed session is reopened."""

_WHEN_IDLE = ("auto", "wake", "defer")
_NO_FILES = (
    "out of file descriptors (ulimit -n), or the database file cannot be opened: answering "
    "503; raise the limit or lower --max-sessions / --max-connections"
)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class HeadlessServer:
    """The HTTP service. ``server.app`` is a Starlette app to run with uvicorn.

    Args:
        db_path: the SQLite file holding every session's conversation; None with
            ``database_url``.
        api_key: the bearer key every request must carry; required. Compared as UTF-8 bytes.
        agent_factory: builds a session's agent (see ``AgentFactory``); it should pass
            ``server_mode=True`` to ``Glove``, and a ``SqliteEventQueue`` on ``store.path``
            (``EventsConfig(queue=)``) so queued events outlive a closed session or a restart.
        max_body_bytes: larger request bodies are refused with 413 (default 256 KiB).
        body_timeout: seconds a request body may take to arrive; slower ones get 408
            (default 30).
        max_sessions: sessions kept open at once (1 or more; default
            ``default_max_sessions()``: ``ulimit -n`` / 16, 4 to 1000, as each open session
            holds a few file descriptors). A session busy with a request is never closed, so
            more can be open while that many are busy.
        idle_timeout: seconds after its last request at which a session is closed (default
            600); ``None`` closes sessions only when ``max_sessions`` needs room.
        web: serve the chat page at ``/`` (default False). It asks for the API key and calls
            the same routes with it; build the Glove with ``server_mode=False`` so the agent
            asks the page's person for permissions and elicitations.
        database_url: a ``postgresql://`` URL instead of ``db_path``: sessions, and whatever
            the factory keeps on ``store.database`` (``PostgresEventQueue``,
            ``PostgresMcpAdapter``), live in one PostgreSQL database that any number of
            instances share behind a load balancer; turns of one conversation take turns
            across instances (see ``PostgresStore``). Needs the ``postgres`` extra.
        database_pool_min: pooled connections kept open (default 1).
        database_pool_max: most pooled connections at once (default 10).
        database_timeout: seconds to wait for a free pooled connection, and to connect at
            start-up (default 30).
        database_max_locks: most turns running at once on this instance; each holds a
            connection of its own for its conversation's lock (default 100).

    Raises:
        ValueError: no API key was given (a server without one would be open to anyone), or
            a limit is out of range (the message names it).
    """

    def __init__(
        self,
        db_path: str | None,
        api_key: str,
        agent_factory: AgentFactory,
        *,
        max_body_bytes: int = 256 * 1024,
        body_timeout: float = 30.0,
        max_sessions: int | None = None,
        idle_timeout: float | None = 600.0,
        web: bool = False,
        database_url: str | None = None,
        database_pool_min: int = 1,
        database_pool_max: int = 10,
        database_timeout: float = 30.0,
        database_max_locks: int = 100,
    ) -> None:
        if not api_key or not api_key.strip():
            raise ValueError(
                "the headless server needs an API key: pass api_key= (glove-mcp serve reads "
                "GLOVE_API_KEY); it refuses to start without one"
            )
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be 1 or more, got {max_body_bytes}")
        if body_timeout <= 0:
            raise ValueError(f"body_timeout must be more than 0 seconds, got {body_timeout}")
        database = None
        if database_url is not None:
            database = DatabaseOptions(
                database_url,
                database_pool_min,
                database_pool_max,
                database_timeout,
                database_max_locks,
            )
        self._storage: SessionStorage = session_storage(db_path, database)
        self._api_key = api_key.encode("utf-8")
        self._factory = agent_factory
        self._max_body = max_body_bytes
        self._body_timeout = body_timeout
        self._cache = SessionCache(max_sessions or default_max_sessions(), idle_timeout)
        self._no_files = OncePer(logger)
        self._relays = Relays()
        # Reply streams open now, each with its turn's abort: ``stopping`` ends them.
        self._replies: dict[asyncio.Queue[SseItem | None], AbortController] = {}
        sessions = SessionRoutes(
            authorize=self._authorize,
            use=self._use,
            read_json=self._json,
            cache=self._cache,
            storage=self._storage,
            relays=self._relays,
        )
        guard = self._guard
        self.app = Starlette(
            routes=[
                Route("/sessions", guard(self._create), methods=["POST"]),
                Route("/sessions", guard(sessions.listing), methods=["GET"]),
                Route("/sessions/{id}", guard(self._history), methods=["GET"]),
                Route("/sessions/{id}", guard(sessions.delete), methods=["DELETE"]),
                Route("/sessions/{id}/messages", guard(self._message), methods=["POST"]),
                Route("/sessions/{id}/events", guard(self._event), methods=["POST"]),
                Route("/sessions/{id}/events", guard(sessions.follow), methods=["GET"]),
                Route("/sessions/{id}/slots", guard(sessions.slots), methods=["GET"]),
                Route("/sessions/{id}/slots/{slot_id}", guard(sessions.answer), methods=["POST"]),
                *(web_routes() if web else []),
            ],
            middleware=[Middleware(AccessLog)],
            # Only Starlette's own 404/405 reach this; routes answer their errors themselves.
            exception_handlers={HTTPException: self._http_error},
            lifespan=self._lifespan,
        )

    def __repr__(self) -> str:
        return f"<HeadlessServer storage={self._storage!r} open_sessions={len(self._cache)}>"

    @property
    def database(self) -> PostgresDatabase | None:
        """The instance's PostgreSQL database with ``database_url=`` (to keep more there, e.g.
        a ``PostgresOAuthStore``, on the same connections), else None."""
        found: PostgresDatabase | None = getattr(self._storage, "database", None)
        return found

    @property
    def open_sessions(self) -> int:
        """How many sessions are open now (at most ``max_sessions`` unless busy)."""
        return len(self._cache)

    # -- plumbing ---------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            await self.open()
            with quiet_accept_errors(self._no_files, _NO_FILES), quiet_refusals():
                yield
        finally:
            await self.aclose()

    async def open(self) -> None:
        """Check the database now (a PostgreSQL server: connect and migrate), so a wrong URL
        fails at start-up rather than on the first request. The app's start-up calls it.

        Raises:
            StoreError: the database cannot be reached.
        """
        await storage_opener(self._storage)

    def stopping(self) -> None:
        """The server is about to stop: end every open stream now with a final ``stopping``
        item (a follow stream's carries the cursor to reconnect with), and abort the turns in
        progress (their history stays whole), so that a shutdown need not wait for clients
        to hang up. Call it from the event loop's thread (e.g. a signal handler's
        ``loop.call_soon_threadsafe``)."""
        self._relays.stopping()
        for queue, controller in list(self._replies.items()):
            queue.put_nowait(("stopping", {}))
            queue.put_nowait(None)
            controller.abort("the server is stopping")
        self._replies.clear()

    async def aclose(self) -> None:
        """Close every session's resources and store, then the database connections."""
        try:
            await self._cache.aclose()
        finally:
            await storage_closer(self._storage)

    def _guard(
        self, endpoint: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """Answer a route's errors here: an exception reaching Starlette's error middleware is
        answered *and* re-raised, and uvicorn then logs its traceback (once per request)."""

        async def guarded(request: Request) -> Response:
            try:
                return await endpoint(request)
            except HTTPException as exc:
                return await self._http_error(request, exc)
            except Exception as exc:
                return self._crash(request, exc)

        return guarded

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        logger.info("%s %s: %d %s", request.method, request.url.path, exc.status_code, exc.detail)
        return _error(exc.status_code, exc.detail)

    def _crash(self, request: Request, exc: Exception) -> Response:
        if out_of_files(exc):
            self._no_files.warning(_NO_FILES)
            response = _error(503, "the server is out of resources; retry shortly")
            response.headers["Retry-After"] = "5"
            return response
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(500, "internal error; the server log has the details")

    def _authorize(self, request: Request) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        # Starlette decodes header bytes as latin-1; encoding back gives the bytes sent, which
        # a client with a non-ASCII key sends as UTF-8.
        sent = token.encode("latin-1")
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent, self._api_key):
            raise HTTPException(401, "missing or wrong API key: send Authorization: Bearer <key>")

    async def _json(self, request: Request, *, optional: bool = False) -> dict[str, Any]:
        return await read_json(
            request, max_bytes=self._max_body, body_timeout=self._body_timeout, optional=optional
        )

    async def _acquire(self, session_id: str, *, create: bool = False) -> CachedSession:
        """The session, open and pinned (pair with ``self._cache.release``)."""
        if not SESSION_ID.match(session_id):
            raise HTTPException(400, "a session id is 1-128 characters from [A-Za-z0-9_.:-]")

        async def open_session() -> CachedSession:
            store = await (self._storage.claim if create else self._storage.find)(session_id)
            if store is None:
                if create:
                    raise HTTPException(409, f"session {session_id!r} already exists")
                raise HTTPException(404, f"no session {session_id!r}")
            stack = AsyncExitStack()
            try:
                glove = self._factory(session_id, store, stack)
                if inspect.isawaitable(glove):
                    glove = await glove
                glove.build()
            except BaseException:
                try:
                    await stack.aclose()
                finally:
                    await store.aclose()
                raise
            # Followers of the session see what its agent does until it closes.
            stack.callback(self._relays.attach(session_id, glove, store))
            return CachedSession(session_id, glove, store, stack)

        try:
            return await self._cache.acquire(session_id, open_session, new=create)
        except SessionOpenError:
            raise HTTPException(409, f"session {session_id!r} already exists") from None

    @contextlib.asynccontextmanager
    async def _use(self, session_id: str) -> AsyncIterator[CachedSession]:
        session = await self._acquire(session_id)
        try:
            yield session
        finally:
            self._cache.release(session)

    # -- routes -----------------------------------------------------------------------------

    async def _create(self, request: Request) -> Response:
        self._authorize(request)
        body = await self._json(request, optional=True)
        session_id = body.get("id", new_id("sess_"))
        if not isinstance(session_id, str):
            raise HTTPException(400, "'id' must be a string")
        self._cache.release(await self._acquire(session_id, create=True))
        return JSONResponse({"id": session_id}, status_code=201)

    async def _history(self, request: Request) -> Response:
        self._authorize(request)
        async with self._use(request.path_params["id"]) as session:
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
        async with self._use(request.path_params["id"]) as session:
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
        session = await self._acquire(request.path_params["id"])
        queue: asyncio.Queue[SseItem | None] = asyncio.Queue()
        controller = AbortController()
        self._replies[queue] = controller
        # The turn runs to completion even if the client goes away, so history stays whole;
        # the session stays pinned (never closed) until it ends.
        task = asyncio.create_task(self._turn(session, text, queue, controller))
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        return StreamingResponse(
            _sse(queue),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _turn(
        self,
        session: CachedSession,
        text: str,
        queue: asyncio.Queue[SseItem | None],
        controller: AbortController,
    ) -> None:
        forwarder = _SseForwarder(queue)
        glove = session.glove
        try:
            async with session.lock:
                glove.add_subscriber(forwarder)
                unsubscribe = glove.display_manager.subscribe(forwarder.slots_changed)
                try:
                    result = await glove.process_request(text, signal=controller.signal)
                finally:
                    unsubscribe()
                    glove.remove_subscriber(forwarder)
                    relay = self._relays.peek(session.id)
                    if relay is not None:
                        await relay.turn_ended()  # a turn that failed part way announced no save
            usage = result.usage.model_dump()
            await queue.put(("final", {"text": result.text, "usage": usage}))
        except GloveError as exc:
            message = f"{type(exc).__name__}: {exc}"
            await queue.put(("error", error_data(message, session_id=session.id)))
        except Exception as exc:
            if out_of_files(exc):
                self._no_files.warning(_NO_FILES)
            else:
                logger.exception("a session request failed")
            await queue.put(("error", {"error": "internal error; see the server log"}))
        finally:
            self._replies.pop(queue, None)
            self._cache.release(session)
            await queue.put(None)


async def _sse(queue: asyncio.Queue[SseItem | None]) -> AsyncIterator[str]:
    while (item := await queue.get()) is not None:
        yield frame(*item)


class _SseForwarder:
    """Turns a session's subscriber events (and slot changes) into a reply stream's items."""

    def __init__(self, queue: asyncio.Queue[SseItem | None]) -> None:
        self._queue = queue

    async def record(self, event: SubscriberEvent) -> None:
        item = event_item(event)
        if item is not None:
            await self._queue.put(item)

    def slots_changed(self, slots: list[Slot]) -> None:
        waiting = [slot_json(s) for s in slots if s.kind == "wait"]
        self._queue.put_nowait(("slots", {"slots": waiting}))
