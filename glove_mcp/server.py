"""Headless server mode: an HTTP service running one agent per session.

Routes (every one but the public ones requires ``Authorization: Bearer <credential>``, which
the server's ``Authenticator`` turns into a ``Principal``, kept as ``request.state.principal``;
a session belongs to the principal that created it, and another gets 404 for it):

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

from glove_core import Glove, GloveError, Slot
from glove_core.errors import EventQueueFullError, EventTooLargeError
from glove_core.subscribers import SubscriberEvent
from glove_core.types import new_id
from glove_mcp._access_log import ACCESS_LOGGER, AccessLog
from glove_mcp._http_limits import HttpLimits, uvicorn_config
from glove_mcp._out_of_files import OncePer, out_of_files, quiet_accept_errors, quiet_refusals
from glove_mcp._pending_events import PendingEvents
from glove_mcp._request_body import read_json
from glove_mcp._server_database import (
    DatabaseOptions,
    session_storage,
    storage_closer,
    storage_opener,
)
from glove_mcp._server_sessions import SessionRoutes, check_id
from glove_mcp._server_sse import SseItem, error_data, event_item, frame
from glove_mcp._server_stream import Relays, slot_json
from glove_mcp._server_web import web_routes
from glove_mcp._session_cache import (
    CachedSession,
    NoRoomError,
    SessionCache,
    SessionOpenError,
    default_max_sessions,
)
from glove_mcp._session_owners import SessionLimitError
from glove_mcp._session_storage import SessionStorage, SessionStore
from glove_mcp.principals import (
    DEFAULT_PRINCIPAL,
    ApiKeys,
    Authenticator,
    FailureThrottle,
    Principal,
    building_for,
    session_owner,
)

if TYPE_CHECKING:
    from glove_core.postgres import PostgresDatabase

__all__ = [
    "ACCESS_LOGGER",
    "AgentFactory",
    "Authenticator",
    "HeadlessServer",
    "HttpLimits",
    "Principal",
    "SessionStore",
    "session_owner",
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


Endpoint = Callable[[Request], Awaitable[Response]]
"""A route's handler."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class _LimitReached(HTTPException):
    """A 429 or 503 the client should retry after ``retry_after`` seconds."""

    def __init__(self, status_code: int, detail: str, retry_after: int) -> None:
        super().__init__(status_code, detail)
        self.retry_after = retry_after


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


def _may(principal: Principal, owner: str, *, read: bool) -> bool:
    """Whether ``principal`` may use a session of ``owner`` (an admin may read any)."""
    return owner == principal.name or (read and principal.is_admin)


async def _whoami(request: Request) -> Response:
    principal = _principal(request)
    return JSONResponse({"principal": principal.name, "scopes": sorted(principal.scopes)})


class HeadlessServer:
    """The HTTP service. ``server.app`` is a Starlette app to run with uvicorn.

    Args:
        db_path: the SQLite file holding every session's conversation; None with
            ``database_url``.
        api_key: one bearer key, of principal ``default`` (at least 20 characters; compared
            by its SHA-256 digest); or None with ``authenticator=``. Both may be given: the
            key is tried first.
        agent_factory: builds a session's agent (see ``AgentFactory``); it should pass
            ``server_mode=True`` to ``Glove``, and a ``SqliteEventQueue`` on ``store.path``
            (``EventsConfig(queue=)``) so queued events outlive a closed session or a restart.
            ``session_owner()`` names the session's principal while it runs.
        authenticator: names each request's principal (``ApiKeys`` of a keys file, a
            ``JwtAuthenticator``, ``FirstOf`` several, or the application's own
            ``Authenticator``).
        throttle: failed authentications per client address (default ``FailureThrottle()``:
            20 failures, then one more every 2 s; 429 with ``Retry-After`` meanwhile).
        max_sessions_per_principal: sessions one principal may have stored (default 1000;
            None: no limit); creating more gets 429.
        max_pending_events: outside events waiting in the whole database, every session
            together, beyond which ``POST /sessions/{id}/events`` gets 503 (default 10000;
            None: no limit; counted in tables named ``glove_events``).
        max_body_bytes: larger request bodies are refused with 413 (default 256 KiB).
        body_timeout: seconds a request body may take to arrive; slower ones get 408
            (default 30).
        max_sessions: sessions kept open at once (1 or more; default
            ``default_max_sessions()``: ``ulimit -n`` / 16, 4 to 1000, as each open session
            holds a few file descriptors). A session busy with a request is never closed, so
            more can be open while that many are busy.
        idle_timeout: seconds after its last request at which a session is closed (default
            600); ``None`` closes sessions only when ``max_sessions`` needs room.
        web: serve the chat page at ``/`` (default False). It asks for a key or token and
            calls the same routes with it; build the Glove with ``server_mode=False`` so the
            agent asks the page's person for permissions and elicitations.
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
        ValueError: neither an API key nor an authenticator was given (a server without one
            would be open to anyone), the key is shorter than 20 characters, or a limit is
            out of range (the message names it).
    """

    def __init__(
        self,
        db_path: str | None,
        api_key: str | None,
        agent_factory: AgentFactory,
        *,
        authenticator: Authenticator | None = None,
        throttle: FailureThrottle | None = None,
        max_sessions_per_principal: int | None = 1000,
        max_pending_events: int | None = 10_000,
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
        if (api_key is None or not api_key.strip()) and authenticator is None:
            raise ValueError(
                "the headless server needs an API key or an authenticator: pass api_key= "
                "(glove-mcp serve reads GLOVE_API_KEY) or authenticator=; it refuses to start "
                "without one"
            )
        keys = ApiKeys.single(api_key, DEFAULT_PRINCIPAL) if api_key else None
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be 1 or more, got {max_body_bytes}")
        if body_timeout <= 0:
            raise ValueError(f"body_timeout must be more than 0 seconds, got {body_timeout}")
        for name, limit in (
            ("max_sessions_per_principal", max_sessions_per_principal),
            ("max_pending_events", max_pending_events),
        ):
            if limit is not None and limit < 1:
                raise ValueError(f"{name} must be 1 or more (or None), got {limit}")
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
        self._authenticators: list[Authenticator] = [
            a for a in (keys, authenticator) if a is not None
        ]
        self._throttle = throttle or FailureThrottle()
        self._max_per_principal = max_sessions_per_principal
        self._pending = PendingEvents(self._storage.pending_events, max_pending_events)
        self._factory = agent_factory
        self._max_body = max_body_bytes
        self._body_timeout = body_timeout
        self._cache = SessionCache(max_sessions or default_max_sessions(), idle_timeout)
        self._no_files = OncePer(logger)
        self._relays = Relays()
        sessions = SessionRoutes(
            use=self._use,
            read_json=self._json,
            cache=self._cache,
            storage=self._storage,
            relays=self._relays,
        )
        self.app = Starlette(
            middleware=[Middleware(AccessLog)],
            # Only Starlette's own 404/405 reach this; routes answer their errors themselves.
            exception_handlers={HTTPException: self._http_error},
            lifespan=self._lifespan,
        )
        # The routes, in one table: path, methods, endpoint (public ones need no credential).
        table: list[tuple[str, str, Endpoint]] = [
            ("/sessions", "POST", self._create),
            ("/sessions", "GET", sessions.listing),
            ("/sessions/{id}", "GET", self._history),
            ("/sessions/{id}", "DELETE", sessions.delete),
            ("/sessions/{id}/messages", "POST", self._message),
            ("/sessions/{id}/events", "POST", self._event),
            ("/sessions/{id}/events", "GET", sessions.follow),
            ("/sessions/{id}/slots", "GET", sessions.slots),
            ("/sessions/{id}/slots/{slot_id}", "POST", sessions.answer),
            ("/principal", "GET", _whoami),
        ]
        for path, method, endpoint in table:
            self.add_route(path, endpoint, methods=[method])
        if web:
            self.app.router.routes.extend(web_routes())  # static files: no credential

    def add_route(
        self,
        path: str,
        endpoint: Endpoint,
        *,
        methods: list[str],
        public: bool = False,
    ) -> None:
        """Serve ``endpoint`` at ``path`` with the server's authentication and error handling.

        The endpoint finds the caller as ``request.state.principal`` (a ``Principal``). A
        ``public`` route is served without a credential (e.g. an OAuth callback, where the
        ``state`` parameter is the credential); ``request.state.principal`` is then None.
        Errors it raises as ``HTTPException`` are answered as ``{"error": …}``; any other is
        logged once and answered 500 (503 when out of file descriptors).
        """
        self.app.router.routes.append(
            Route(path, self._guard(endpoint, public=public), methods=methods)
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

    async def aclose(self) -> None:
        """Close every session's resources and store, then the database connections."""
        try:
            await self._cache.aclose()
        finally:
            await storage_closer(self._storage)

    def _guard(self, endpoint: Endpoint, *, public: bool) -> Endpoint:
        """Authenticate, then answer a route's errors here: an exception reaching Starlette's
        error middleware is answered *and* re-raised, and uvicorn then logs its traceback
        (once per request)."""

        async def guarded(request: Request) -> Response:
            try:
                if public:
                    request.state.principal = None
                else:
                    refusal = await self._authenticate(request)
                    if refusal is not None:
                        return refusal
                return await endpoint(request)
            except HTTPException as exc:
                return await self._http_error(request, exc)
            except Exception as exc:
                return self._crash(request, exc)

        return guarded

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        logger.info("%s %s: %d %s", request.method, request.url.path, exc.status_code, exc.detail)
        response = _error(exc.status_code, exc.detail)
        if isinstance(exc, _LimitReached):
            response.headers["Retry-After"] = str(exc.retry_after)
        return response

    def _crash(self, request: Request, exc: Exception) -> Response:
        if out_of_files(exc):
            self._no_files.warning(_NO_FILES)
            response = _error(503, "the server is out of resources; retry shortly")
            response.headers["Retry-After"] = "5"
            return response
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(500, "internal error; the server log has the details")

    async def _authenticate(self, request: Request) -> Response | None:
        """Set ``request.state.principal``; or the answer refusing the request (401, 429)."""
        address = request.client.host if request.client is not None else "unknown"
        wait = self._throttle.retry_after(address)
        if wait is not None:
            # Before the credential is looked at: a right guess gets the same answer.
            response = _error(429, "too many failed authentications from this address")
            response.headers["Retry-After"] = str(wait)
            return response
        for authenticator in self._authenticators:
            principal = await authenticator.authenticate(request)
            if principal is not None:
                request.state.principal = principal
                return None
        self._throttle.failed(address)
        logger.info("%s %s: 401 (no valid credential)", request.method, request.url.path)
        response = _error(
            401, "missing or wrong API key or token: send Authorization: Bearer <key>"
        )
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    async def _json(self, request: Request, *, optional: bool = False) -> dict[str, Any]:
        return await read_json(
            request, max_bytes=self._max_body, body_timeout=self._body_timeout, optional=optional
        )

    async def _acquire(
        self, session_id: str, principal: Principal, *, create: bool = False, read: bool = False
    ) -> CachedSession:
        """The session, open and pinned (pair with ``self._cache.release``): 404 unless
        ``principal`` owns it (or, for a ``read``, is an admin)."""
        check_id(session_id)

        async def open_session() -> CachedSession:
            if create:
                try:
                    store = await self._storage.claim(
                        session_id, principal.name, self._max_per_principal
                    )
                except SessionLimitError as exc:
                    raise _LimitReached(429, str(exc), 60) from None
                if store is None:
                    raise HTTPException(409, f"session {session_id!r} already exists")
                owner = principal.name
            else:
                found = await self._storage.owner(session_id)
                # Another's session is unknown to this principal: its existence stays hidden.
                if found is None or not _may(principal, found, read=read):
                    raise HTTPException(404, f"no session {session_id!r}")
                owner = found
                store = await self._storage.find(session_id)
                if store is None:
                    raise HTTPException(404, f"no session {session_id!r}")
            stack = AsyncExitStack()
            try:
                with building_for(owner):
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
            return CachedSession(session_id, glove, store, stack, owner=owner)

        try:
            session = await self._cache.acquire(session_id, open_session, new=create)
        except SessionOpenError:
            raise HTTPException(409, f"session {session_id!r} already exists") from None
        except NoRoomError as exc:
            raise _LimitReached(503, str(exc), 2) from None
        if not _may(principal, session.owner, read=read):
            self._cache.release(session)
            raise HTTPException(404, f"no session {session_id!r}")
        return session

    @contextlib.asynccontextmanager
    async def _use(
        self, session_id: str, principal: Principal, *, read: bool = False
    ) -> AsyncIterator[CachedSession]:
        session = await self._acquire(session_id, principal, read=read)
        try:
            yield session
        finally:
            self._cache.release(session)

    # -- routes -----------------------------------------------------------------------------

    async def _create(self, request: Request) -> Response:
        body = await self._json(request, optional=True)
        session_id = body.get("id", new_id("sess_"))
        if not isinstance(session_id, str):
            raise HTTPException(400, "'id' must be a string")
        principal = _principal(request)
        self._cache.release(await self._acquire(session_id, principal, create=True))
        return JSONResponse({"id": session_id}, status_code=201)

    async def _history(self, request: Request) -> Response:
        async with self._use(request.path_params["id"], _principal(request), read=True) as session:
            messages = await session.store.get_messages()
        return JSONResponse(
            {
                "id": request.path_params["id"],
                "messages": [m.model_dump(mode="json", exclude_none=True) for m in messages],
            }
        )

    async def _event(self, request: Request) -> Response:
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
                expires_at = datetime.fromisoformat(str(body["expires_at"])[:64])
            except ValueError:
                raise HTTPException(400, "expires_at must be an ISO 8601 date-time") from None
            if expires_at.tzinfo is None:
                raise HTTPException(400, "expires_at needs a timezone (e.g. ...Z or +00:00)")
        for name in ("id", "source", "kind", "content"):
            if not isinstance(body[name], str):
                raise HTTPException(400, f"event field {name!r} must be a string")
        async with self._use(request.path_params["id"], _principal(request)) as session:
            wait = await self._pending.full()
            if wait is not None:
                raise _LimitReached(
                    503,
                    "the server holds as many pending outside events as it may (every session "
                    "together); retry when they have been handled",
                    wait,
                )
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
                raise _LimitReached(429, str(exc), 5) from None  # the sender retries later
            self._pending.added()
        return JSONResponse({"disposition": disposition})

    async def _message(self, request: Request) -> Response:
        body = await self._json(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise HTTPException(400, "'text' must be a non-empty string")
        session = await self._acquire(request.path_params["id"], _principal(request))
        queue: asyncio.Queue[SseItem | None] = asyncio.Queue()
        # The turn runs to completion even if the client goes away, so history stays whole;
        # the session stays pinned (never closed) until it ends.
        task = asyncio.create_task(self._turn(session, text, queue))
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        return StreamingResponse(
            _sse(queue),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _turn(
        self, session: CachedSession, text: str, queue: asyncio.Queue[SseItem | None]
    ) -> None:
        forwarder = _SseForwarder(queue)
        glove = session.glove
        try:
            async with session.lock:
                glove.add_subscriber(forwarder)
                unsubscribe = glove.display_manager.subscribe(forwarder.slots_changed)
                try:
                    result = await glove.process_request(text)
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
