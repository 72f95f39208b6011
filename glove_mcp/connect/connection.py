"""Connections to MCP servers over Streamable HTTP.

``connect_mcp`` opens one persistent MCP session (opened once, then reused by every
call), kept alive and recovered as below.

HTTP goes through the transport of an ``McpClientPool`` (``glove_mcp.connect.http``): pass one pool
to several connections and mounts to share its sockets and TLS context; without ``pool=`` a
connection makes its own and closes it when it closes. Each session sends through a client of
its own carrying the connection's ``auth``, so connections share sockets but never
credentials.

Protocol: by default (``protocol="auto"``) a connection opens with ``server/discover``, the
stateless 2026-07-28 protocol that 2.x servers speak, and falls back to the ``initialize``
handshake for handshake-era servers; after one fallback it goes straight to the handshake when
it reconnects. The stateless protocol costs two requests to mount a server (discover,
tools/list) instead of three and has no session for the server to expire; against the test
servers it halves the client's CPU per new connection. ``protocol="legacy"`` skips the probe.

We use ``ClientSession`` + ``streamable_http_client`` rather than ``mcp.Client``: the low-level
pair gives us the session, the transport and the HTTP client to own explicitly.

The session and its transport run inside a dedicated *owner task*
(``glove_mcp.connect._mcp_session``): anyio requires that the task that opened a transport closes
it, so ``close()`` only signals the owner and waits — it works from any task, which avoids the
"Attempted to exit cancel scope in a different task" error other frameworks hit.

Recovery contract of every request (``_request``):

- 401: the auth helper asks its source for a fresh token and resends once; still 401 →
  ``McpAuthExpiredError`` (a bridged tool turns it into the ``auth_expired`` error result).
- 403 ``insufficient_scope``: ``McpInsufficientScopeError`` naming the scope.
- the server forgot the session (404; HTTP 400 "No valid session ID" / "Session not found", as
  TypeScript-SDK servers answer after a restart; JSON-RPC -32001): the request never ran, so
  open a new session and send it again, once.
- any other refusal: the error quotes the HTTP status and the first line of the body (bounded,
  URLs and credentials redacted).
- connection refused / reset / timeout: ``McpServerUnavailableError`` / ``McpTimeoutError``
  naming the server; the broken session is dropped and the next call reconnects.
- an answer that is not a valid result: ``McpProtocolError`` naming the fields.
- an answer larger than ``max_message_bytes`` (HTTP): not read; ``McpResponseTooLargeError``
  naming the limit, and the session stays open. Over stdio the SDK reads each line whole: a
  stdio server is a process of the user's own, which could take the memory anyway, and what
  it returns is bounded by the bridge and the tool runner before anything is kept.

Resources and prompts run through the same request path, so each gets the recovery, timeouts and
401 handling; their capability check runs inside the request, on the session that carries it: a
reconnect may reach a server that declares something else than the last session's did.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import replace
from enum import Enum
from typing import Any, Literal, TypeVar, cast

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from glove_core.models import ModelAdapter
from glove_core.resources import AsyncResource
from glove_mcp import types as own
from glove_mcp.connect._calls import plain_call, task_call
from glove_mcp.connect._client_info import ClientInfo
from glove_mcp.connect._convert import (
    call_result_from_sdk,
    prompt_from_sdk,
    prompt_result_from_sdk,
    read_result_from_sdk,
    resource_from_sdk,
    resource_template_from_sdk,
    tool_from_sdk,
)
from glove_mcp.connect._failures import (
    Answers,
    auth_expired,
    malformed,
    open_failure,
    refusal_since,
    request_failure,
    with_refusal,
)
from glove_mcp.connect._mcp_session import (
    ListingSession,
    ProtocolChoice,
    Session,
    run_on_session,
)
from glove_mcp.connect._skills_apps import (
    ListSkillsParams,
    ListSkillsRequest,
    ListSkillsResult,
    view_from_read,
)
from glove_mcp.connect._tracing import (
    MCP_PROTOCOL_VERSION,
    MCP_SESSION_ID,
    McpRequestSpan,
    peer_attributes,
    request_span,
)
from glove_mcp.connect.elicitation import OnElicitation
from glove_mcp.connect.http import DEFAULT_MAX_MESSAGE_BYTES, McpClientPool
from glove_mcp.connect.list_cache import server_identity
from glove_mcp.connect.mcp_server_requests import (
    ChangeKind,
    ProgressGate,
    ProgressSink,
    RootsOption,
    ServerRequests,
    connection_requests,
)
from glove_mcp.connect.tasks import TaskPolicy, TaskWatch, wants_task
from glove_mcp.connect.tool_filter import ToolFilter, include_tool
from glove_mcp.errors import (
    GloveMcpError,
    McpCapabilityError,
    McpInsufficientScopeError,
    McpProtocolError,
    McpResponseTooLargeError,
    McpServerUnavailableError,
    McpSessionExpiredError,
    McpStateError,
    McpTimeoutError,
)
from glove_mcp.extensions.apps import APP_MIME_TYPE, UI_EXTENSION, McpAppView
from glove_mcp.extensions.skills import MAX_SKILLS, SKILLS_EXTENSION, McpSkill, skill_from_wire
from glove_mcp.types import (
    McpCallResult,
    McpPrompt,
    McpPromptResult,
    McpReadResult,
    McpResource,
    McpResourceTemplate,
    McpTool,
)

__all__ = [
    "ClientInfo",
    "ConnectionState",
    "McpClientPool",
    "McpServerConnection",
    "ProtocolChoice",
    "ToolFilter",
    "connect_mcp",
    "include_tool",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_Page = TypeVar("_Page", bound=types.PaginatedResult)

_MAX_PAGES = 1000

Capability = Literal["resources", "prompts"]


class ConnectionState(Enum):
    """Where a connection is in its life."""

    IDLE = "idle"
    """Not connected yet, or the last session broke; the next call connects."""
    CONNECTED = "connected"
    CLOSED = "closed"


def declares(session: ClientSession | None, capability: str) -> bool:
    """Whether the server declared ``capability`` on ``session`` (False without one)."""
    caps = session.server_capabilities if session is not None else None
    return caps is not None and getattr(caps, capability, None) is not None


def _require(session: ClientSession, namespace: str, capability: Capability) -> None:
    if not declares(session, capability):
        raise McpCapabilityError(namespace, capability)


class McpServerConnection(AsyncResource):
    """A persistent connection to one MCP server. Create it with ``connect_mcp``.

    Attributes:
        namespace: the server's id; bridged tool names start with it.
        url: the Streamable HTTP endpoint ("" for a stdio server).
        command: for a stdio server, the command that starts it (None for HTTP).
    """

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
        apps: bool = False,
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
        self._tools_ttl_ms: int | None = None
        self._task_watch = TaskWatch()
        self.requests = requests or ServerRequests()
        """How it answers what the server asks (sampling, elicitation, roots) and where the
        server's log messages and list changes go."""
        self.apps = apps
        """Whether it declares the MCP Apps extension (``glove_mcp.extensions.apps``): only a
        host that renders views should."""
        # List caching: public pages go to the pool's cache under the server's identity,
        # private ones under a partition only this connection has.
        self._lists = self._pool.list_cache
        self._list_partition = self._lists.private_partition()
        self._list_server = server_identity(url, self.command, self._env, self._declared())
        self._session: Session | None = None
        self._connecting = asyncio.Lock()
        self._state = ConnectionState.IDLE
        self.reconnects = 0
        """How many times a new session replaced a broken or expired one."""
        self._sessions_opened = 0
        self._background: set[asyncio.Task[Any]] = set()
        self._peer = peer_attributes(namespace, url)

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
            McpServerUnavailableError: the server could not be reached.
            McpTimeoutError: the server did not answer in time.
            McpAuthExpiredError: the server refused the credentials, also after a refresh.
            McpProtocolError: the server answered outside the protocol.
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
            with request_span("initialize", None, self._peer) as span:
                return await self._open(span)

    async def _open(self, span: McpRequestSpan) -> Session:
        """A new session, its handshake under ``span`` (``server/discover`` on the stateless
        protocol, ``initialize`` otherwise)."""
        if self._sessions_opened:
            self.reconnects += 1
        self._sessions_opened += 1
        fresh = Session(
            self.namespace,
            self.url,
            pool=self._pool,
            auth=self._auth,
            timeout=self._timeout,
            client_info=self._client_info,
            command=self.command,
            env=self._env,
            protocol=self.protocol,
            requests=self._requests_with_invalidation(),
            max_message_bytes=self.max_message_bytes,
            watch=self._task_watch,
            extensions=self._extensions(),
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
        if fresh.protocol != "legacy":
            span.rename("server/discover")
        _describe(span, fresh)
        return fresh

    def _declared(self) -> str:
        """What this client declares that may change what a server lists, for cache keys."""
        r = self.requests
        flags = [r.sampling is not None, r.elicitation is not None, r.roots is not None]
        flags.append(self.apps)
        return "".join("1" if f else "0" for f in flags) + f":{self.tasks}"

    def _requests_with_invalidation(self) -> ServerRequests:
        """``self.requests``, with a ``list_changed`` first making that list's cached pages
        stale (for every connection of the pool), then going where it went before."""
        changed = self.requests.on_list_changed
        if changed is None:
            # Nobody listens (plain connect_mcp): cached pages live out their ttlMs, as
            # the spec allows a client that does not subscribe.
            return self.requests

        async def on_list_changed(kind: ChangeKind) -> None:
            self._lists.invalidate(self._list_server, kind)
            await changed(kind)

        return replace(self.requests, on_list_changed=on_list_changed)

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
        method: str,
        target: str | None = None,
        bounded: bool = True,
        judge: Callable[[_T], str | None] | None = None,
    ) -> _T:
        """Run ``op`` (the request ``method`` on ``target``) under its span; ``judge`` names
        the ``error.type`` of a result that reports a failure (a tool's ``isError``)."""
        extra = None if bounded else {"glove.mcp.task": True}
        with request_span(method, target, self._peer, extra) as span:
            result = await self._attempts(what, op, bounded, span)
            failed = judge(result) if judge is not None else None
            if failed is not None:
                span.fail(failed)
            return result

    async def _attempts(
        self,
        what: str,
        op: Callable[[ClientSession], Coroutine[Any, Any, _T]],
        bounded: bool,
        span: McpRequestSpan,
    ) -> _T:
        for attempt in (1, 2):
            session = await self._ensure()
            assert session.session is not None
            _describe(span, session)
            before = Answers.of(session)
            try:
                limit = self.call_timeout if bounded else None
                return await run_on_session(session, op, limit, self._background)
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
                    refusal = refusal_since(session, before)
                    raise McpProtocolError(
                        self.namespace,
                        what,
                        exc.error.code,
                        with_refusal(exc.error.message, refusal),
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

    @property
    def tools_ttl_ms(self) -> int | None:
        """How long the server said its last ``tools/list`` result stays fresh (``ttlMs``,
        milliseconds; the smallest of its pages), or None when it gave none (or 0), or before
        the first ``list_tools``. A page the pool's list cache served counts with the
        ``ttlMs`` it arrived with."""
        return self._tools_ttl_ms

    @property
    def instructions(self) -> str | None:
        """What the server said about how to use it (``instructions``), or None; None too
        while not connected."""
        live = self._live()
        return live.instructions if live is not None else None

    def declares(self, capability: str) -> bool:
        """Whether the live session's server declared ``capability`` (``"tools"``,
        ``"resources"``, ``"prompts"``, ``"logging"``, ...); False while not connected."""
        return declares(self._live(), capability)

    async def notify_roots_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``), so it
        asks for them again. Only a connection opened with ``roots`` declares roots; on the
        stateless protocol a server asks for them with each request that needs them, so
        there is nothing to send. Does nothing while not connected."""
        live = self._live()
        if live is None or self.requests.roots is None or self.protocol != "legacy":
            return
        try:
            await live.send_notification(types.RootsListChangedNotification())
        except (MCPError, httpx2.HTTPError, OSError) as exc:
            # A courtesy: a server that missed it asks again when it next needs the roots.
            logger.info("MCP server %r: roots/list_changed not sent: %s", self.namespace, exc)

    async def list_tools(self, *, limit: int | None = None) -> list[McpTool]:
        """Every tool the server offers, following pagination, minus those ``include_tool``
        rejects (``exclude_tools`` and ``filter_tools``).

        Args:
            limit: at most this many tools (None: all); no more pages are read once that many
                passed the filters, so a server whose listing never ends costs a few pages.
                Pass one more than you will offer to learn whether there were more.

        Raises:
            McpConnectionError: the server could not be reached, or the connection broke.
            McpAuthExpiredError: the server refused the credentials, also after a refresh.
            McpProtocolError: the server answered outside the protocol.
            McpStateError: the connection is used after it was closed.
        """
        if limit is not None and limit < 1:
            raise ValueError(f"list_tools: limit must be at least 1, got {limit}")
        offered: list[McpTool] = []
        support: dict[str, str | None] = {}
        ttls: list[int] = []

        async def fetch(
            s: ClientSession, p: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await s.list_tools(params=p)

        def take(page: types.ListToolsResult) -> bool:
            ttls.append(page.ttl_ms)
            for listed in page.tools:
                if limit is not None and len(offered) >= limit:
                    return False
                tool = tool_from_sdk(listed)
                support[tool.name] = tool.task_support
                if include_tool(self.namespace, tool, self.exclude_tools, self.filter_tools):
                    offered.append(tool)
            return limit is None or len(offered) < limit

        await self._paginate("tools/list", None, fetch, take)
        self._task_support = support
        # The listing holds while every page does; a page without ttlMs (0) holds for none.
        self._tools_ttl_ms = min(ttls) if ttls and min(ttls) > 0 else None
        return offered

    async def call_tool(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        on_progress: ProgressSink | None = None,
        meta: dict[str, Any] | None = None,
    ) -> McpCallResult:
        """Call the server tool ``name`` (its real, un-namespaced name).

        ``meta`` goes in the request's ``_meta`` (e.g. ``IDEMPOTENCY_KEY_META``, which a
        bridged tool sends); a call run as a task sends none.

        A tool that failed on the server comes back with ``is_error=True``; this raises only
        for failures of the connection itself.

        Every call carries a progress token; the server's progress reports go to
        ``on_progress(progress, total, message)``, at most about ten a second (the last one
        always). When the server needs input first (an ``InputRequiredResult`` on the
        2026-07-28 protocol), its requests are answered with the connection's sampling,
        elicitation and roots handlers and the call is retried with the answers, as many
        rounds as it takes (up to ten).

        Raises:
            McpAuthExpiredError: 401 even with a fresh token.
            McpConnectionError: the server is unreachable or too slow (the next call
                reconnects), or dropped the session twice.
            McpProtocolError: the server answered with a JSON-RPC error.
            McpResponseTooLargeError: the answer was over ``max_message_bytes``.
            McpStateError: the connection is used after it was closed.
        """

        gate = ProgressGate(on_progress)
        if wants_task(self._task_support.get(name), self.tasks):
            return await self._call_as_task(name, args, gate)

        async def call(s: ClientSession) -> types.CallToolResult:
            return await plain_call(
                s, name, args, gate, self.call_timeout, meta, self._task_watch.streams
            )

        return call_result_from_sdk(
            await self._request(
                f"tools/call {name!r}", call, method="tools/call", target=name, judge=_tool_error
            )
        )

    async def _call_as_task(
        self, name: str, args: dict[str, Any] | None, gate: ProgressGate
    ) -> McpCallResult:
        # The task bounds its own wait and cancels itself on the server when it runs out; its
        # TimeoutError then becomes McpTimeoutError like any call's, but the session stays.
        async def call(s: ClientSession) -> types.CallToolResult:
            return await task_call(s, name, args, gate, self.call_timeout, self._task_watch)

        return call_result_from_sdk(
            await self._request(
                f"tools/call {name!r} (task)",
                call,
                method="tools/call",
                target=name,
                bounded=False,
                judge=_tool_error,
            )
        )

    # -- resources and prompts ---

    async def list_resources(self) -> list[own.McpResource]:
        """Every resource it lists (all pages); ``McpCapabilityError`` if it declares none."""
        return await self._list_resources()

    async def list_resource_templates(self) -> list[own.McpResourceTemplate]:
        """Every resource template it lists (all pages); ``McpCapabilityError`` as above."""
        return await self._list_resource_templates()

    async def read_resource(self, uri: str) -> own.McpReadResult:
        """Read resource ``uri``; an unknown one raises ``McpProtocolError``."""
        return await self._read_resource(uri)

    def declares_extension(self, identifier: str) -> bool:
        """Whether the live session's server declared extension ``identifier``
        (``capabilities.extensions``; False while not connected)."""
        session = self._live()
        caps = session.server_capabilities if session is not None else None
        extensions = getattr(caps, "extensions", None) if caps is not None else None
        return isinstance(extensions, Mapping) and identifier in extensions

    async def list_skills(self) -> list[McpSkill]:
        """The server's skills (``skills/list``, every page; at most ``MAX_SKILLS``, malformed
        entries left out with a log line); [] when it does not declare the skills extension.

        Raises:
            McpProtocolError: the server refused; and the connection's errors.
        """
        if not self.declares_extension(SKILLS_EXTENSION):
            return []

        async def fetch(
            s: ClientSession, p: types.PaginatedRequestParams | None
        ) -> ListSkillsResult:
            params = ListSkillsParams(cursor=p.cursor if p is not None else None)
            return await s.send_request(ListSkillsRequest(params=params), ListSkillsResult)

        pages = await self._paginate("skills/list", None, fetch)
        skills: list[McpSkill] = []
        for page in pages:
            for entry in page.skills:
                skill = skill_from_wire(entry)
                if skill is None:
                    logger.info("MCP server %r listed a malformed skill; left out", self.namespace)
                elif len(skills) < MAX_SKILLS:
                    skills.append(skill)
        if len(skills) == MAX_SKILLS:
            logger.warning(
                "MCP server %r lists more than %d skills; the rest are left out",
                self.namespace,
                MAX_SKILLS,
            )
        return skills

    async def read_app_view(self, uri: str) -> McpAppView:
        """Read the MCP Apps view ``uri`` (a ``ui://`` resource of type
        ``text/html;profile=mcp-app``), its declared CSP kept.

        Raises:
            McpProtocolError: the server refused, or what it returned is no view (another
                type, too large, no contents for ``uri``); and the connection's errors.
        """
        if not uri.startswith("ui://"):
            raise McpProtocolError(
                self.namespace, "resources/read", types.INVALID_PARAMS, f"{uri!r} is no ui:// URI"
            )

        async def op(s: ClientSession) -> types.ReadResourceResult:
            _require(s, self.namespace, "resources")
            return await s.read_resource(uri)

        found = view_from_read(
            uri, await self._request(f"resources/read {uri!r}", op, method="resources/read")
        )
        if isinstance(found, str):
            raise McpProtocolError(self.namespace, "resources/read", types.INVALID_PARAMS, found)
        return found

    def _extensions(self) -> dict[str, dict[str, Any]]:
        """What the client declares in ``capabilities.extensions``."""
        declared: dict[str, dict[str, Any]] = {SKILLS_EXTENSION: {}}
        if self.apps:
            declared[UI_EXTENSION] = {"mimeTypes": [APP_MIME_TYPE]}
        return declared

    async def list_prompts(self) -> list[own.McpPrompt]:
        """Every prompt it offers (all pages); ``McpCapabilityError`` if it declares none."""
        return await self._list_prompts()

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> own.McpPromptResult:
        """Prompt ``name`` with ``arguments``; unknown, or an argument missing: McpProtocolError."""
        return await self._get_prompt(name, arguments)

    async def _paginate(
        self,
        what: str,
        capability: Capability | None,
        fetch: Callable[
            [ClientSession, types.PaginatedRequestParams | None], Coroutine[Any, Any, _Page]
        ],
        more: Callable[[_Page], bool] | None = None,
    ) -> list[_Page]:
        """Every page of a paginated list (``tools/list`` and the resource and prompt lists), with a
        page cap (1000 pages, then a warning and what was read) and a repeated-cursor check: a
        server that loops its cursors gets an error, not an endless loop. ``capability`` (when
        given) must be declared by the server. ``more(page)``, when given, sees each page as it
        comes; False stops reading (a caller that has enough does not read an endless list)."""
        pages: list[_Page] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None

            async def page(
                s: ClientSession, p: types.PaginatedRequestParams | None = params
            ) -> _Page:
                if capability is not None:
                    _require(s, self.namespace, capability)
                key = (self._list_server, s.protocol_version or "", what, p.cursor if p else None)
                cached = await self._lists.get(*key, self._list_partition)
                if isinstance(cached, types.ListToolsResult) and isinstance(s, ListingSession):
                    whole = p is None and cached.next_cursor is None
                    return cast(_Page, s.absorb_tools(cached, complete=whole))
                if cached is not None:
                    return cast(_Page, cached)
                fetched = await fetch(s, p)
                await self._lists.put(*key, self._list_partition, fetched)
                return fetched

            result = await self._request(what, page, method=what)
            pages.append(result)
            wanted = more(result) if more is not None else True
            cursor = result.next_cursor
            if not cursor or not wanted:
                break
            if cursor in seen:
                raise McpProtocolError(
                    self.namespace,
                    what,
                    types.INVALID_REQUEST,
                    f"the server repeated the pagination cursor {cursor!r}",
                )
            seen.add(cursor)
        else:
            logger.warning(
                "MCP server %r: %s still had more after %d pages; using what was read",
                self.namespace,
                what,
                _MAX_PAGES,
            )
        return pages

    async def _list_resources(self) -> list[McpResource]:
        """``resources/list``, every page."""

        async def fetch(
            s: ClientSession, p: types.PaginatedRequestParams | None
        ) -> types.ListResourcesResult:
            return await s.list_resources(params=p)

        pages = await self._paginate("resources/list", "resources", fetch)
        return [resource_from_sdk(r) for page in pages for r in page.resources]

    async def _list_resource_templates(self) -> list[McpResourceTemplate]:
        """``resources/templates/list``, every page."""

        async def fetch(
            s: ClientSession, p: types.PaginatedRequestParams | None
        ) -> types.ListResourceTemplatesResult:
            return await s.list_resource_templates(params=p)

        pages = await self._paginate("resources/templates/list", "resources", fetch)
        return [resource_template_from_sdk(t) for page in pages for t in page.resource_templates]

    async def _read_resource(self, uri: str) -> McpReadResult:
        """``resources/read`` of ``uri``."""

        async def op(s: ClientSession) -> types.ReadResourceResult:
            _require(s, self.namespace, "resources")
            return await s.read_resource(uri)

        return read_result_from_sdk(
            await self._request(f"resources/read {uri!r}", op, method="resources/read")
        )

    async def _list_prompts(self) -> list[McpPrompt]:
        """``prompts/list``, every page."""

        async def fetch(
            s: ClientSession, p: types.PaginatedRequestParams | None
        ) -> types.ListPromptsResult:
            return await s.list_prompts(params=p)

        pages = await self._paginate("prompts/list", "prompts", fetch)
        return [prompt_from_sdk(p) for page in pages for p in page.prompts]

    async def _get_prompt(self, name: str, arguments: dict[str, str] | None) -> McpPromptResult:
        """``prompts/get`` of ``name`` with ``arguments``."""
        if arguments is not None:
            wrong = sorted(repr(k) for k, v in arguments.items() if not isinstance(v, str))
            if wrong:
                # The protocol carries prompt arguments as strings only; say so before the server
                # answers with a schema error that names none of them.
                raise TypeError(
                    f"prompt {name!r} of MCP server {self.namespace!r}: argument values must be "
                    f"strings; not strings: {', '.join(wrong)}"
                )

        async def op(s: ClientSession) -> types.GetPromptResult:
            _require(s, self.namespace, "prompts")
            return await s.get_prompt(name, arguments)

        what = f"prompts/get {name!r}"
        try:
            return prompt_result_from_sdk(
                await self._request(what, op, method="prompts/get", target=name)
            )
        except McpProtocolError as exc:
            # Servers word these refusals poorly (the SDK's own server answers a missing argument
            # with "Internal server error" on the stateless protocol), so look at the listing and
            # say what was wrong. Only on failure: a good request costs no extra round trip.
            hint = await self._prompt_hint(name, arguments or {})
            if hint is None:
                raise
            raise McpProtocolError(self.namespace, what, exc.code, f"{exc.detail}. {hint}") from exc

    async def _prompt_hint(self, name: str, arguments: dict[str, str]) -> str | None:
        try:
            prompts = {p.name: p for p in await self._list_prompts()}
        except GloveMcpError:
            return None
        prompt = prompts.get(name)
        if prompt is None:
            offered = ", ".join(repr(n) for n in prompts) or "none"
            return f"It offers no prompt {name!r} (prompts: {offered})"
        takes = {a.name: a for a in prompt.arguments}
        missing = [repr(a) for a, arg in takes.items() if arg.required and a not in arguments]
        unknown = [repr(a) for a in arguments if a not in takes]
        problems = []
        if missing:
            problems.append(f"missing required argument(s) {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown argument(s) {', '.join(unknown)}")
        if not problems:
            return None
        signature = ", ".join(a + ("" if arg.required else "?") for a, arg in takes.items())
        return f"Prompt {name!r} ({signature or 'no arguments'}): {'; '.join(problems)}"

    def __repr__(self) -> str:
        where = self.url or f"stdio:{self.command[0] if self.command else '?'}"
        return f"<McpServerConnection {self.namespace!r} {where} {self.state.value}>"


def _describe(span: McpRequestSpan, session: Session) -> None:
    """What the span learns from the session it ran on: protocol version, session id."""
    live = session.session
    if live is not None:
        span.set(MCP_PROTOCOL_VERSION, live.protocol_version)
    span.set(MCP_SESSION_ID, session.session_id)


def _tool_error(result: types.CallToolResult) -> str | None:
    return "tool_error" if result.is_error else None


async def connect_mcp(
    namespace: str,
    url: str,
    auth: httpx2.Auth | None = None,
    client_info: ClientInfo | None = None,
    exclude_tools: Collection[str] = (),
    filter_tools: ToolFilter | None = None,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    pool: McpClientPool | None = None,
    connect_timeout: float = 30.0,
    call_timeout: float | None = 300.0,
    protocol: ProtocolChoice = "auto",
    sampling_model: ModelAdapter | None = None,
    on_elicitation: OnElicitation | None = None,
    roots: RootsOption | None = None,
    log_level: types.LoggingLevel | None = None,
    tasks: TaskPolicy = "never",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> McpServerConnection:
    """Open a persistent session to an MCP server over Streamable HTTP, or over stdio.

    Args:
        namespace: the server's id (the catalogue id); bridged tools are named
            ``namespace__tool``.
        url: the Streamable HTTP endpoint; "" for a stdio server.
        auth: credentials resolved per request: ``bearer(...)``, ``headers(...)``,
            ``adapter_auth(...)`` or any ``httpx2.Auth`` (e.g. an OAuth provider).
        client_info: how the client introduces itself.
        exclude_tools: server tool names (un-namespaced) never listed.
        filter_tools: ``(namespace, tool) -> bool``; False hides a tool.
        pool: the HTTP transport to share with other connections (never closed here); by
            default the connection makes its own and closes it with the connection.
        connect_timeout: seconds for connecting and the opening request (``server/discover``
            or ``initialize``).
        call_timeout: seconds a tool call may take (None: no limit).
        command: for a stdio server (``url=""``), the command that starts it, e.g.
            ``["npx", "-y", "some-mcp-server"]``; the process lives as long as the session.
        env: extra environment variables for that process.
        protocol: ``"auto"`` (the stateless protocol when the server speaks it, else the
            ``initialize`` handshake) or ``"legacy"`` (the handshake only).
        sampling_model: answers the server's sampling requests (capped at
            ``DEFAULT_SAMPLING_MAX_TOKENS``); None refuses them, and declares no sampling.
        on_elicitation: ``(request) -> {"action": ..., "content": ...}``, sync or async,
            answers the server's elicitation requests (see ``glove_mcp.connect.elicitation``); None
            refuses them, and declares no elicitation.
        roots: the directories (or ``file://`` URIs) the server may work in, or a function
            returning them; None declares no roots.
        log_level: the level to ask the server to log at; its messages go to the logger
            ``glove_mcp.mcp_server.<namespace>``.
        tasks: ``"optional"`` runs tools whose tasks are optional as tasks; tools that
            require them always run as tasks.
        max_message_bytes: the most bytes one message from the server may take over HTTP (a
            JSON response, one SSE event; default 8 MiB, at least 1024); a larger one is not
            read and its request raises ``McpResponseTooLargeError``.

    Returns:
        The connected ``McpServerConnection``; close it with ``close()`` or ``async with``.

    Raises:
        McpServerUnavailableError: the server could not be reached.
        McpTimeoutError: the server did not answer in time.
        McpAuthExpiredError: the server refused the credentials, also after a refresh.
        McpProtocolError: the server answered outside the protocol.
    """
    conn = McpServerConnection(
        namespace,
        url,
        command=command,
        env=env,
        auth=auth,
        client_info=client_info,
        exclude_tools=exclude_tools,
        filter_tools=filter_tools,
        pool=pool,
        connect_timeout=connect_timeout,
        call_timeout=call_timeout,
        protocol=protocol,
        requests=connection_requests(namespace, sampling_model, on_elicitation, roots, log_level),
        tasks=tasks,
        max_message_bytes=max_message_bytes,
    )
    try:
        await conn.connect()
    except BaseException:
        await conn.close()
        raise
    return conn
