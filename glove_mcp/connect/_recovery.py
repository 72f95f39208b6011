"""The part of an MCP connection that keeps a session alive: opening it in its owner task,
sending each request through it, and recovering when it breaks.

The session and its transport run inside a dedicated *owner task*
(``glove_mcp.connect._mcp_session``): anyio requires that the task that opened a transport closes
it, so ``close()`` only signals the owner and waits — it works from any task, which avoids the
"Attempted to exit cancel scope in a different task" error other frameworks hit.

Recovery contract of every request (``_request``):

- 401: the auth helper asks its source for a fresh token and resends once; still 401 →
  ``McpAuthExpiredError`` (a bridged tool turns it into the ``auth_expired`` error result).
- 403 ``insufficient_scope``: ``McpInsufficientScopeError`` naming the scope.
- 404 on a live session (a handshake-era server expired it): open a new session and retry once.
- connection refused / reset / timeout: ``McpServerUnavailableError`` / ``McpTimeoutError``
  naming the server; the broken session is dropped and the next call reconnects.
- an answer that is not a valid result: ``McpProtocolError`` naming the fields.
- an answer larger than ``max_message_bytes`` (HTTP): not read; ``McpResponseTooLargeError``
  naming the limit, and the session stays open. Over stdio the SDK reads each line whole: a
  stdio server is a process of the user's own, which could take the memory anyway, and what
  it returns is bounded by the bridge and the tool runner before anything is kept.

``McpServerConnection`` (``glove_mcp.connect``) is the MCP API over it.
"""

import asyncio
import logging
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from glove_core.resources import AsyncResource
from glove_mcp.connect._client_info import ClientInfo
from glove_mcp.connect._failures import (
    Answers,
    auth_expired,
    malformed,
    open_failure,
    request_failure,
)
from glove_mcp.connect._mcp_session import ProtocolChoice, Session, run_request
from glove_mcp.connect.http import DEFAULT_MAX_MESSAGE_BYTES, McpClientPool
from glove_mcp.connect.mcp_server_requests import (
    ServerRequests,
)
from glove_mcp.connect.tasks import TaskPolicy
from glove_mcp.connect.tool_filter import ToolFilter
from glove_mcp.errors import (
    McpInsufficientScopeError,
    McpProtocolError,
    McpResponseTooLargeError,
    McpServerUnavailableError,
    McpSessionExpiredError,
    McpStateError,
    McpTimeoutError,
)

__all__ = ["ConnectionState", "RecoveringConnection"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


class ConnectionState(Enum):
    """Where a connection is in its life."""

    IDLE = "idle"
    """Not connected yet, or the last session broke; the next call connects."""
    CONNECTED = "connected"
    CLOSED = "closed"


class RecoveringConnection(AsyncResource):
    """A session to one MCP server that reopens itself when it breaks (see the module
    docstring); ``McpServerConnection`` adds the MCP methods."""

    def __init__(
        self,
        namespace: str,
        url: str,
        *,
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        client_info: ClientInfo | None = None,
        exclude_tools: Collection[str] = (),
        filter_tools: ToolFilter | None = None,
        pool: McpClientPool | None = None,
        connect_timeout: float = 30.0,
        call_timeout: float | None = 300.0,
        close_timeout: float = 5.0,
        protocol: ProtocolChoice = "auto",
        requests: ServerRequests | None = None,
        tasks: TaskPolicy = "never",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        if not isinstance(max_message_bytes, int) or max_message_bytes < 1024:
            raise ValueError(
                f"MCP connection {namespace!r}: max_message_bytes must be a whole number of "
                f"bytes, at least 1024, got {max_message_bytes!r}"
            )
        if protocol not in ("auto", "legacy"):
            raise ValueError(
                f"MCP connection {namespace!r}: protocol must be 'auto' or 'legacy', "
                f"not {protocol!r}"
            )
        if bool(url) == bool(command):
            raise ValueError(
                f"MCP connection {namespace!r}: give a url (Streamable HTTP) or a command "
                "(stdio), exactly one"
            )
        self.namespace = namespace
        self.url = url
        self.command = list(command) if command else None
        self._env = dict(env) if env else None
        self._auth = auth
        self._client_info = (client_info or ClientInfo()).to_mcp()
        self.exclude_tools = frozenset(exclude_tools)
        self.filter_tools = filter_tools
        # Without a pool the connection makes its own, and closes it when it closes.
        self._own_pool = pool is None
        self._pool = pool if pool is not None else McpClientPool()
        # No HTTP read limit: a tool call's SSE response may stay silent for a long time; request
        # deadlines are enforced per call (call_timeout).
        self._timeout = httpx2.Timeout(connect_timeout, read=None)
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.close_timeout = close_timeout
        self.max_message_bytes = max_message_bytes
        """The most bytes one message from the server may take (see ``glove_mcp.connect.http``)."""
        self.protocol: ProtocolChoice = protocol
        """``"auto"`` until a server rejects the stateless protocol, then ``"legacy"``."""
        self.tasks: TaskPolicy = tasks
        """When a call runs as a task: always for tools that require it; for tools where
        it is optional, unless this is ``"never"``."""
        self._task_support: dict[str, str | None] = {}
        self.requests = requests or ServerRequests()
        """How it answers what the server asks (sampling, elicitation, roots) and where the
        server's log messages and list changes go."""
        self._session: Session | None = None
        self._connecting = asyncio.Lock()
        self._state = ConnectionState.IDLE
        self.reconnects = 0
        """How many times a new session replaced a broken or expired one."""
        self._sessions_opened = 0
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def pool(self) -> McpClientPool:
        """The ``McpClientPool`` it sends through: the one passed in, or its own (closed with
        the connection)."""
        return self._pool

    @property
    def state(self) -> ConnectionState:
        """IDLE, CONNECTED or CLOSED."""
        if self._state is ConnectionState.CLOSED:
            return self._state
        alive = self._session is not None and self._session.alive
        return ConnectionState.CONNECTED if alive else ConnectionState.IDLE

    def _live(self) -> ClientSession | None:
        """The SDK session of the live session, or None."""
        session = self._session
        return session.session if session is not None and session.alive else None

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the live session (e.g. ``"2026-07-28"``), or None."""
        live = self._live()
        return live.protocol_version if live is not None else None

    @property
    def raw(self) -> ClientSession:
        """The SDK's ``ClientSession`` of the current session, for what this class does not
        wrap. It is replaced when the connection recovers; don't keep it.

        Raises:
            McpStateError: not connected.
        """
        live = self._live()
        if live is None:
            raise McpStateError(
                f"MCP connection {self.namespace!r} has no live session ({self.state.value}); "
                "await connect() or call a tool first"
            )
        return live

    # -- session lifecycle -------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the session now (``connect_mcp`` does; later calls reconnect by themselves).

        Raises:
            McpServerUnavailableError, McpTimeoutError, McpAuthExpiredError, McpProtocolError.
            McpStateError: the connection is closed.
        """
        await self._ensure()

    async def _ensure(self) -> Session:
        self._check_open()
        current = self._session
        if current is not None and current.alive:
            return current
        async with self._connecting:
            self._check_open()
            current = self._session
            if current is not None and current.alive:
                return current
            if current is not None:
                self._session = None
                await current.shutdown(self.close_timeout)
            if self._sessions_opened:
                self.reconnects += 1
            self._sessions_opened += 1
            fresh = Session(
                self.namespace,
                self.url,
                self._pool,
                self._auth,
                self._timeout,
                self._client_info,
                command=self.command,
                env=self._env,
                protocol=self.protocol,
                requests=self.requests,
                max_message_bytes=self.max_message_bytes,
            )
            self._session = fresh
            try:
                await asyncio.wait_for(asyncio.shield(fresh.ready), self.connect_timeout)
            except BaseException as exc:
                self._session = None
                # No graceful close: a session that never opened has nothing to tell a
                # server that is down or stalled, and waiting for it would only delay the error.
                await fresh.shutdown(0)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise open_failure(
                    exc, fresh, auth=self._auth, what="connect", timeout=self.connect_timeout
                ) from exc
            # Remembered: a server that rejected server/discover once is not probed again.
            self.protocol = fresh.protocol
            return fresh

    async def _drop(self, session: Session) -> None:
        """Forget a broken session. No graceful close: telling a server that is down, stalled
        or has forgotten the session to terminate it would only wait."""
        if self._session is session:
            self._session = None
        await session.shutdown(0)

    def _check_open(self) -> None:
        if self._state is ConnectionState.CLOSED:
            raise McpStateError(
                f"MCP connection {self.namespace!r} is closed; open a new one with connect_mcp"
            )

    async def close(self) -> None:
        """Close the session from any task (idempotent)."""
        if self._state is ConnectionState.CLOSED:
            return
        self._state = ConnectionState.CLOSED
        session, self._session = self._session, None
        try:
            if session is not None:
                await session.shutdown(self.close_timeout)
        finally:
            if self._own_pool:
                await self._pool.aclose()

    async def aclose(self) -> None:
        """The same as ``close()``, under ``AsyncResource``'s name."""
        await self.close()

    async def _enter(self) -> None:
        await self._ensure()

    # -- requests ----------------------------------------------------------------------------

    async def _request(
        self,
        what: str,
        op: Callable[[ClientSession], Coroutine[Any, Any, _T]],
        *,
        bounded: bool = True,
    ) -> _T:
        for attempt in (1, 2):
            session = await self._ensure()
            assert session.session is not None
            before = Answers.of(session)
            try:
                limit = self.call_timeout if bounded else None
                return await run_request(session, op, limit, self._background)
            except TimeoutError as exc:
                if bounded:
                    # Our deadline cut the request off mid-way: the session may still be
                    # stuck on it. An unbounded op (a task) timed out by itself, after
                    # cancelling on the server, and leaves the session sound.
                    await self._drop(session)
                raise McpTimeoutError(self.namespace, self.url, what, self.call_timeout) from exc
            except MCPError as exc:
                failure = request_failure(exc, session, before)
                if failure == "unauthorized":
                    raise auth_expired(self.namespace, self.url, self._auth) from exc
                if failure == "insufficient_scope":
                    raise McpInsufficientScopeError(
                        self.namespace, self.url, session.required_scope
                    ) from exc
                if failure == "too_large":
                    # The session is fine: only that answer went unread.
                    raise McpResponseTooLargeError(
                        self.namespace, self.url, what, self.max_message_bytes
                    ) from exc
                if failure == "error":
                    raise McpProtocolError(
                        self.namespace, what, exc.error.code, exc.error.message
                    ) from exc
                await self._drop(session)
                if failure == "expired":
                    if attempt == 1:
                        logger.info(
                            "MCP server %r expired the session; re-initializing", self.namespace
                        )
                        continue
                    raise McpSessionExpiredError(self.namespace, self.url) from exc
                if failure == "timeout":
                    raise McpTimeoutError(
                        self.namespace, self.url, what, self.call_timeout
                    ) from exc
                self._check_open()
                raise McpServerUnavailableError(
                    self.namespace, self.url, "connection closed"
                ) from exc
            except ValidationError as exc:
                # The server answered, but not with the result the method has: the session is
                # fine, the answer is not.
                raise McpProtocolError(
                    self.namespace, what, types.INTERNAL_ERROR, malformed(exc)
                ) from exc
            except (httpx2.TransportError, OSError) as exc:
                await self._drop(session)
                raise McpServerUnavailableError(
                    self.namespace, self.url, type(exc).__name__
                ) from exc
        raise AssertionError("unreachable")  # pragma: no cover
