"""Connections to MCP servers over Streamable HTTP.

``connect_mcp`` opens one persistent MCP session (opened once, then reused by every
call), kept alive and recovered by ``glove_mcp._recovering`` (its owner task, and the recovery
contract of every request: 401, 403, 404, refused, timeouts).

HTTP goes through the transport of an ``McpClientPool`` (``glove_mcp._http``): pass one pool
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
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from glove_core.models import ModelAdapter
from glove_mcp import _resources
from glove_mcp import types as own
from glove_mcp._calls import plain_call, task_call
from glove_mcp._client_info import ClientInfo
from glove_mcp._convert import call_result_from_sdk, tool_from_sdk
from glove_mcp._http import DEFAULT_MAX_MESSAGE_BYTES, McpClientPool
from glove_mcp._recovering import ConnectionState, RecoveringConnection
from glove_mcp._server_requests import (
    ProgressGate,
    ProgressSink,
    RootsOption,
    connection_requests,
)
from glove_mcp._session import ProtocolChoice
from glove_mcp._tasks import TaskPolicy, wants_task
from glove_mcp._tool_filter import ToolFilter, include_tool
from glove_mcp.elicitation import OnElicitation
from glove_mcp.types import McpCallResult, McpTool

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


class McpServerConnection(RecoveringConnection):
    """A persistent connection to one MCP server. Create it with ``connect_mcp``.

    Attributes:
        namespace: the server's id; bridged tool names start with it.
        url: the Streamable HTTP endpoint ("" for a stdio server).
        command: for a stdio server, the command that starts it (None for HTTP).
    """

    @property
    def instructions(self) -> str | None:
        """What the server said about how to use it (``instructions``), or None; None too
        while not connected."""
        live = self._live()
        return live.instructions if live is not None else None

    def declares(self, capability: str) -> bool:
        """Whether the live session's server declared ``capability`` (``"tools"``,
        ``"resources"``, ``"prompts"``, ``"logging"``, ...); False while not connected."""
        return _resources.declares(self._live(), capability)

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

        async def fetch(
            s: ClientSession, p: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await s.list_tools(params=p)

        def take(page: types.ListToolsResult) -> bool:
            for listed in page.tools:
                if limit is not None and len(offered) >= limit:
                    return False
                tool = tool_from_sdk(listed)
                support[tool.name] = tool.task_support
                if include_tool(self.namespace, tool, self.exclude_tools, self.filter_tools):
                    offered.append(tool)
            return limit is None or len(offered) < limit

        await _resources.paginate(self._request, self.namespace, "tools/list", None, fetch, take)
        self._task_support = support
        return offered

    async def call_tool(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        on_progress: ProgressSink | None = None,
    ) -> McpCallResult:
        """Call the server tool ``name`` (its real, un-namespaced name).

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
            return await plain_call(s, name, args, gate)

        return call_result_from_sdk(await self._request(f"tools/call {name!r}", call))

    async def _call_as_task(
        self, name: str, args: dict[str, Any] | None, gate: ProgressGate
    ) -> McpCallResult:
        # The task bounds its own wait and cancels itself on the server when it runs out; its
        # TimeoutError then becomes McpTimeoutError like any call's, but the session stays.
        async def call(s: ClientSession) -> types.CallToolResult:
            return await task_call(s, name, args, gate, self.call_timeout)

        return call_result_from_sdk(
            await self._request(f"tools/call {name!r} (task)", call, bounded=False)
        )

    # -- resources and prompts ---

    async def list_resources(self) -> list[own.McpResource]:
        """Every resource it lists (all pages); ``McpCapabilityError`` if it declares none."""
        return await _resources.list_resources(self._request, self.namespace)

    async def list_resource_templates(self) -> list[own.McpResourceTemplate]:
        """Every resource template it lists (all pages); ``McpCapabilityError`` as above."""
        return await _resources.list_resource_templates(self._request, self.namespace)

    async def read_resource(self, uri: str) -> own.McpReadResult:
        """Read resource ``uri``; an unknown one raises ``McpProtocolError``."""
        return await _resources.read_resource(self._request, self.namespace, uri)

    async def list_prompts(self) -> list[own.McpPrompt]:
        """Every prompt it offers (all pages); ``McpCapabilityError`` if it declares none."""
        return await _resources.list_prompts(self._request, self.namespace)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> own.McpPromptResult:
        """Prompt ``name`` with ``arguments``; unknown, or an argument missing: McpProtocolError."""
        return await _resources.get_prompt(self._request, self.namespace, name, arguments)

    def __repr__(self) -> str:
        where = self.url or f"stdio:{self.command[0] if self.command else '?'}"
        return f"<McpServerConnection {self.namespace!r} {where} {self.state.value}>"


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
            answers the server's elicitation requests (see ``glove_mcp.elicitation``); None
            refuses them, and declares no elicitation.
        roots: the directories (or ``file://`` URIs) the server may work in, or a function
            returning them; None declares no roots.
        log_level: the level to ask the server to log at; its messages go to the logger
            ``glove_mcp.server.<namespace>``.
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


def __getattr__(name: str) -> Any:
    # ``Protocol`` was this type's name until it was seen to shadow ``typing.Protocol``.
    if name == "Protocol":
        warnings.warn(
            "glove_mcp.connect.Protocol is deprecated: use glove_mcp.ProtocolChoice",
            DeprecationWarning,
            stacklevel=2,
        )
        return ProtocolChoice
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
