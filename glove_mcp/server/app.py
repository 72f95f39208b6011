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

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from glove_mcp.server._app_views import FRAME_PATH, AppCalls, frame
from glove_mcp.server._database import (
    DatabaseOptions,
    session_storage,
    storage_closer,
    storage_opener,
)
from glove_mcp.server._http_limits import HttpLimits, uvicorn_config
from glove_mcp.server._out_of_files import (
    OncePer,
    out_of_files,
    quiet_accept_errors,
    quiet_refusals,
)
from glove_mcp.server._pending_events import PendingEvents
from glove_mcp.server._session_access import NO_FILES, AgentFactory, RetryLater, SessionAccess
from glove_mcp.server._session_cache import (
    SessionCache,
    default_max_sessions,
)
from glove_mcp.server._sessions import SessionRoutes
from glove_mcp.server._stream import Relays
from glove_mcp.server._web import web_routes
from glove_mcp.server.access_log import ACCESS_LOGGER, AccessLog
from glove_mcp.server.connection_flows import flow_store
from glove_mcp.server.connections import (
    CALLBACK_PATH,
    ConnectionService,
    check_public_url,
    mounted_routes,
)
from glove_mcp.server.principals import (
    DEFAULT_PRINCIPAL,
    ApiKeys,
    Authenticator,
    FailureThrottle,
    Principal,
    session_owner,
)
from glove_mcp.server.session_storage import SessionStorage, SessionStore

if TYPE_CHECKING:
    from glove_core.postgres import PostgresDatabase

__all__ = [
    "ACCESS_LOGGER",
    "AgentFactory",
    "Authenticator",
    "ConnectionService",
    "HeadlessServer",
    "HttpLimits",
    "Principal",
    "SessionStore",
    "session_owner",
    "uvicorn_config",
]

logger = logging.getLogger(__name__)

Endpoint = Callable[[Request], Awaitable[Response]]
"""A route's handler."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


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
        max_sessions_per_principal: sessions one principal may have stored (default 10000;
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
        public_url: the externally visible base URL (redirect URIs); plain http only on
            loopback.
        connections: serve ``/connections`` and ``/oauth/callback`` for these servers,
            flows kept in the server's database (``docs/connections.md``).
        principal_of: the principal of an authenticated request for the connection routes
            (default: the one the authenticator named, ``request.state.principal``).

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
        max_sessions_per_principal: int | None = 10_000,
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
        public_url: str | None = None,
        connections: ConnectionService | None = None,
        principal_of: Callable[[Request], Principal] | None = None,
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
        public_url = check_public_url(public_url)
        self._flows = None if connections is None else flow_store(db_path, self.database)
        self._authenticators: list[Authenticator] = [
            a for a in (keys, authenticator) if a is not None
        ]
        self._throttle = throttle or FailureThrottle()
        self._cache = SessionCache(max_sessions or default_max_sessions(), idle_timeout)
        self._no_files = OncePer(logger)
        self._relays = Relays()
        access = SessionAccess(
            self._storage, self._cache, self._relays, agent_factory, max_sessions_per_principal
        )
        sessions = self._sessions = SessionRoutes(
            access,
            PendingEvents(self._storage.pending_events, max_pending_events),
            self._no_files,
            max_body_bytes=max_body_bytes,
            body_timeout=body_timeout,
        )
        self.app = Starlette(
            middleware=[Middleware(AccessLog)],
            # Only Starlette's own 404/405 reach this; routes answer their errors themselves.
            exception_handlers={HTTPException: self._http_error},
            lifespan=self._lifespan,
        )
        # Every route, in one table: path, method, endpoint; each needs a credential (see
        # ``add_route`` for public ones).
        table: list[tuple[str, str, Endpoint]] = [
            ("/sessions", "POST", sessions.create),
            ("/sessions", "GET", sessions.listing),
            ("/sessions/{id}", "GET", sessions.history),
            ("/sessions/{id}", "DELETE", sessions.delete),
            ("/sessions/{id}/messages", "POST", sessions.message),
            ("/sessions/{id}/events", "POST", sessions.event),
            ("/sessions/{id}/events", "GET", sessions.follow),
            ("/sessions/{id}/slots", "GET", sessions.slots),
            ("/sessions/{id}/slots/{slot_id}", "POST", sessions.answer),
            ("/principal", "GET", _whoami),
        ]
        if web:  # views (MCP Apps) are shown by the page only
            calls = AppCalls(access, max_body_bytes=max_body_bytes, body_timeout=body_timeout)
            table.append(("/sessions/{id}/app-calls", "POST", calls.call))
        for path, method, endpoint in table:
            self.add_route(path, endpoint, methods=[method])
        if web:
            self.app.router.routes.extend(web_routes())  # static files: no credential
            self.app.router.routes.append(Route(FRAME_PATH, frame, methods=["GET"]))
        # /connections and the OAuth callback: authenticated here like every route (the
        # callback is public: its state is the credential).
        for route in mounted_routes(
            connections,
            self._flows,
            lambda request: None,
            lambda request: principal_of(request) if principal_of else request.state.principal,
            public_url,
        ):
            self.add_route(
                route.path,
                route.endpoint,
                methods=sorted((route.methods or set()) - {"HEAD"}),
                public=route.path == CALLBACK_PATH,
            )

    def stopping(self) -> None:
        """The server is about to stop: end every open stream now with a final ``stopping``
        item and abort the turns in progress (their history stays whole), so that a shutdown
        need not wait for clients to hang up. Call it from the event loop's thread (e.g. a
        signal handler's ``loop.call_soon_threadsafe``)."""
        self._sessions.stopping()

    async def resume_interrupted(self, session_id: str, *, wait: float = 1.0) -> int:
        """Finish the turns of ``session_id`` that a dead instance left unfinished, when the
        agents run on a durable execution (``Glove(execution=…)``); opens the session for its
        owner. Gives up after ``wait`` seconds without the session's turn (another instance
        is running one, and finishes it itself).

        Returns:
            How many turns were resumed (0 for an unknown session).
        """
        return await self._sessions.resume_interrupted(session_id, wait)

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
            with quiet_accept_errors(self._no_files, NO_FILES), quiet_refusals():
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
            if self._flows is not None:
                await self._flows.aclose()
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
        if isinstance(exc, RetryLater):
            response.headers["Retry-After"] = str(exc.retry_after)
        return response

    def _crash(self, request: Request, exc: Exception) -> Response:
        if out_of_files(exc):
            self._no_files.warning(NO_FILES)
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
