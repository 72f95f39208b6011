"""One MCP session (Streamable HTTP transport + ``ClientSession``) inside its owner task.

anyio requires that the task which entered the transport's task groups also exits them, so
each session runs in a dedicated task; other tasks use the ``ClientSession`` and ask the owner
to stop (``shutdown``). A session also counts the 401 and 404 answers its requests got, so the
connection can tell an expired token or session from other failures.

Protocol era: with ``protocol="auto"`` a session first sends ``server/discover``, the one
request of the stateless 2026-07-28 protocol that 2.x servers speak (no ``initialize``, no
``notifications/initialized``, no session id to expire, no DELETE on close), and falls back to
the ``initialize`` handshake when the server rejects it, as every handshake-era server does.
``"legacy"`` goes straight to ``initialize``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack
from typing import Any, Literal, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost, listen
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from glove_mcp.connect._http_answer import HttpAnswer, answer_of, says_session_lost
from glove_mcp.connect._stderr import StderrCapture, stdio_server
from glove_mcp.connect._tracing import detach_ambient
from glove_mcp.connect.http import DEFAULT_MAX_MESSAGE_BYTES, McpClientPool, observe_status
from glove_mcp.connect.mcp_server_requests import ServerRequests
from glove_mcp.connect.tasks import TaskWatch
from glove_mcp.connect.tasks_extension import extension_kwargs
from glove_mcp.errors import GloveMcpError

__all__ = [
    "ListingSession",
    "ProtocolChoice",
    "Session",
    "forget_when_done",
    "leaves",
    "run_on_session",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

_CANCEL_GRACE = 5.0

# HTTP answers with which older servers reject ``server/discover``: 400 (the TypeScript SDK:
# "Unsupported protocol version", "Server not initialized"; the Python 1.x SDK: "Missing
# session ID"), 404 (no such route or method), 405 and 406 (a gateway refusing the request).
_ERA_STATUSES = frozenset({400, 404, 405, 406})
# Words of a JSON-RPC error that mean "I speak an older protocol", whatever its code (the
# TypeScript SDK uses -32000, which is also the code the Python SDK gives a dropped connection).
_SCOPE = re.compile(r'scope="([^"]*)"')
_ERA_WORDS = ("protocol version", "not initialized", "session id", "method not found")

ProtocolChoice = Literal["auto", "legacy"]
"""How a session opens: ``"auto"`` tries the stateless protocol (``server/discover``) and falls
back to the ``initialize`` handshake; ``"legacy"`` only uses the handshake."""


class ListingSession(ClientSession):
    """The SDK's session, able to take in a ``tools/list`` page it did not fetch itself.

    ``ClientSession.list_tools`` derives per-tool state from each listing it fetches: the
    output schemas results are validated against, and on 2026-07-28 the ``x-mcp-header``
    arguments mirrored into request headers (tools with invalid ones dropped). A page served
    from the list cache must go through the same step, or the session lists again at its
    first call and sends calls without their headers. The step is the SDK's own
    ``_absorb_tool_listing``, documented as the seam its response cache re-absorbs listings
    through; it is reached here from the subclass only.
    """

    def absorb_tools(self, page: types.ListToolsResult, *, complete: bool) -> types.ListToolsResult:
        """Take in a cached ``tools/list`` page as if it had just been fetched; returns the
        page as the session keeps it (tools with invalid header annotations dropped).

        Args:
            page: the page.
            complete: the page is the whole listing (no cursor asked, none returned).
        """
        return self._absorb_tool_listing(page.model_copy(deep=True), complete=complete)


class Session:
    """One MCP session inside its owner task."""

    def __init__(
        self,
        namespace: str,
        url: str,
        *,
        pool: McpClientPool,
        auth: httpx2.Auth | None,
        timeout: httpx2.Timeout,
        client_info: types.Implementation,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
        protocol: ProtocolChoice = "auto",
        requests: ServerRequests | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        watch: TaskWatch | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.namespace = namespace
        self.extensions = extensions
        self.max_message_bytes = max_message_bytes
        self.too_large = 0
        """Responses whose reading stopped at ``max_message_bytes``."""
        self.requests = requests or ServerRequests()
        self.watch = watch
        """Where progress and status notifications of running tasks go."""
        self.protocol = protocol
        self.url = url
        self.command = command
        self.env = env
        self.client_info = client_info
        self.session: ClientSession | None = None
        """The SDK session, once it is open."""
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` the server gave (handshake protocol over HTTP), or None."""
        self.session_in_handshake: ClientSession | None = None
        """The SDK session from the moment it exists, before the handshake ends."""
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.scope = anyio.CancelScope()
        self.unauthorized = 0
        self.not_found = 0
        self.last_status: int | None = None
        self.insufficient_scope = 0
        """403 ``insufficient_scope`` answers (the token lacks a scope the request needs)."""
        self.required_scope: str | None = None
        self.refused: HttpAnswer | None = None
        """The last refusal (status 400 or more): its status and first line, for errors."""
        self.refusals = 0
        self.lost = 0
        """Refusals that said the server forgot the session (404, or 400 "No valid session
        ID", "Session not found", -32001)."""
        self._pool = pool
        self._auth = auth
        self._timeout = timeout
        # Work a server's notifications started (re-listing after a change), cancelled when
        # the session ends.
        self._spawned: set[asyncio.Task[Any]] = set()
        self.task = asyncio.create_task(self._own(), name=f"mcp-session:{namespace}")

    def _spawn(self, work: Awaitable[None]) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                logger.exception("MCP server %r: handling a notification failed", self.namespace)

        task = asyncio.create_task(run(), name=f"mcp-session:{self.namespace}:notification")
        self._spawned.add(task)
        task.add_done_callback(forget_when_done(self._spawned))

    def _wants_server_stream(self) -> bool:
        """Whether the standalone stream is worth opening: the client declared something a
        server may ask outside a call, or the server declared notifications the client
        wants (list changes, log messages)."""
        if self.requests.asks_back:
            return True
        session = self.session_in_handshake
        caps = session.server_capabilities if session is not None else None
        if caps is None:
            return False
        if self.requests.log_level is not None and caps.logging is not None:
            return True
        if self.requests.on_list_changed is None:
            return False
        return any(
            c is not None and c.list_changed for c in (caps.tools, caps.prompts, caps.resources)
        )

    def _too_large(self, limit: int) -> None:
        self.too_large += 1
        logger.warning(
            "MCP server %r sent a message larger than %d bytes (max_message_bytes); "
            "it was not read",
            self.namespace,
            limit,
        )

    def _note(self, response: httpx2.Response) -> None:
        status = self.last_status = response.status_code
        sid = response.headers.get("mcp-session-id")
        if sid:
            self.session_id = sid
        if status >= 400:
            try:
                body = response.content
            except httpx2.ResponseNotRead:  # reading it failed; the status says enough
                body = b""
            self.refused = answer_of(status, body)
            self.refusals += 1
            if status == 404 or says_session_lost(self.refused):
                self.lost += 1
        if status == 403:
            challenge = response.headers.get("www-authenticate", "")
            if "insufficient_scope" in challenge:
                self.insufficient_scope += 1
                found = _SCOPE.search(challenge)
                self.required_scope = found.group(1) if found else None
        elif status == 401:
            self.unauthorized += 1
        elif status == 404:
            self.not_found += 1

    async def _own(self) -> None:
        try:
            with self.scope:
                await self._serve()
        except BaseException as exc:
            self._fail_ready(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            found = leaves(exc)
            if found and all(isinstance(leaf, GloveMcpError) for leaf in found):
                # Our own errors (a refused OAuth URL, …) say everything in one line; the
                # caller gets them, and a traceback in the log adds only noise.
                logger.debug("MCP session of %r ended: %s", self.namespace, found[0])
            else:
                logger.debug("MCP session of %r ended", self.namespace, exc_info=True)
        finally:
            self._fail_ready(ConnectionError("the session ended before initialize"))

    def _started(self) -> bool:
        return self.ready.done() and not self.ready.cancelled() and not self.ready.exception()

    def _fail_ready(self, exc: BaseException) -> None:
        if self.ready.done():
            return
        self.ready.set_exception(exc)
        # A connect that gave up (timed out, cancelled) no longer awaits it: asyncio would
        # report "exception was never retrieved" at exit. Waiters still get the exception.
        self.ready.exception()

    async def _serve(self) -> None:
        async with AsyncExitStack() as stack:
            capture: StderrCapture | None = None
            if self.command:
                # A stdio server: the process is the session; it ends when the session does.
                # It needs no HTTP client, so the pool's transport is not made for it (~60 ms).
                params = StdioServerParameters(
                    command=self.command[0], args=self.command[1:], env=self.env
                )
                # Its stderr goes to the log, bounded, not to the terminal (see _stderr),
                # and so do lines it prints to stdout that are not JSON-RPC: the SDK's reader
                # task inherits this task's context, so its log records name the server.
                stdio_server.set(self.namespace)
                capture = StderrCapture(self.namespace, self._started)
                errlog = (await stack.enter_async_context(capture)).pipe()
                transport: Any = stdio_client(params, errlog=errlog)
            else:
                # This session's own client over the shared transport; closed with the session.
                # No standalone server-to-client stream: nothing here consumes messages a
                # server sends outside a request (see glove_mcp.connect.http).
                http = await stack.enter_async_context(
                    self._pool.new_client(
                        observe_status(self._auth, self._note),
                        self._timeout,
                        server_stream=self._wants_server_stream,
                        max_message_bytes=self.max_message_bytes,
                        on_too_large=self._too_large,
                    )
                )
                # The client's transport bounds each event first (and says so); the SDK's own
                # bound is a backstop at the same size.
                transport = streamable_http_client(
                    self.url, http_client=http, max_sse_event_size=self.max_message_bytes
                )
            read, write = await stack.enter_async_context(transport)
            if capture is not None:
                capture.spawned()
            session = await stack.enter_async_context(
                ListingSession(
                    read,
                    write,
                    client_info=self.client_info,
                    **self.requests.callbacks(self.namespace, self._spawn, self.watch),
                    # The tasks extension is declared on 2026-07-28 only: a server may then
                    # answer tools/call with a task handle, which every call follows
                    # (_calls.plain_call). Skills and apps are declared as the mount asks.
                    **_with_extensions(
                        extension_kwargs(self.watch.streams if self.watch else None),
                        self.extensions,
                    ),
                )
            )
            self.session_in_handshake = session
            if self.protocol == "legacy" or not await self._discover(session):
                await session.initialize()
                self.protocol = "legacy"
            self.session = session
            self.ready.set_result(None)
            # The handshake ran under the caller's span; what this task does from now on
            # (listening, answering the server) belongs to no request of it.
            detach_ambient()
            try:
                if self._listens(session):
                    async with anyio.create_task_group() as group:
                        group.start_soon(self._listen, session)
                        await self.stop.wait()
                        group.cancel_scope.cancel()
                else:
                    await self.stop.wait()
            finally:
                for task in list(self._spawned):
                    task.cancel()

    def _listens(self, session: ClientSession) -> bool:
        """On the stateless protocol, change notifications come only through a
        ``subscriptions/listen`` stream: open one when the server declares changes and the
        client wants to hear of them."""
        if self.protocol == "legacy" or self.requests.on_list_changed is None:
            return False
        caps = session.server_capabilities
        return caps is not None and any(
            c is not None and c.list_changed for c in (caps.tools, caps.prompts, caps.resources)
        )

    async def _listen(self, session: ClientSession) -> None:
        """Hold a ``subscriptions/listen`` stream open for the session's life. Its events are
        also handed to the session's message handler (the SDK tees every frame), which is
        where they are acted on; here they are only drained."""
        caps = session.server_capabilities
        assert caps is not None
        try:
            async with listen(
                session,
                tools_list_changed=bool(caps.tools and caps.tools.list_changed),
                prompts_list_changed=bool(caps.prompts and caps.prompts.list_changed),
                resources_list_changed=bool(caps.resources and caps.resources.list_changed),
            ) as subscription:
                async for _ in subscription:
                    pass
        except (ListenNotSupportedError, SubscriptionLost, MCPError, TimeoutError) as exc:
            # Change notifications are a courtesy: without them the tools stay as listed.
            logger.info(
                "MCP server %r: no change notifications (subscriptions/listen: %s)",
                self.namespace,
                exc,
            )

    async def _discover(self, session: ClientSession) -> bool:
        """True when the server speaks the stateless protocol (and the session adopted it)."""
        try:
            await session.discover()
        except MCPError as exc:
            if not self._rejects_discover(exc):
                raise
            logger.debug(
                "MCP server %r rejected server/discover (HTTP %s, JSON-RPC %s %r); "
                "using the initialize handshake",
                self.namespace,
                self.last_status,
                exc.error.code,
                exc.error.message,
            )
            return False
        except (RuntimeError, ValidationError) as exc:
            # It answered, but with no version or result we can use.
            logger.debug(
                "MCP server %r answered server/discover unusably (%s); using the initialize "
                "handshake",
                self.namespace,
                type(exc).__name__,
            )
            return False
        logger.debug("MCP server %r speaks the stateless protocol", self.namespace)
        return True

    def _rejects_discover(self, exc: MCPError) -> bool:
        """Whether an error answer to ``server/discover`` says "older server" (fall back) rather
        than "no answer" (a credential problem, a timeout, a dropped connection: raise)."""
        if self.unauthorized:
            return False  # initialize would get the same 401
        code, words = exc.error.code, exc.error.message.lower()
        if code == types.REQUEST_TIMEOUT or (self.last_status or 0) >= 500:
            return False  # a passing failure: remembering "older server" would outlive it
        if code != types.CONNECTION_CLOSED:
            return True  # the server answered with an error of its own: method not found, ...
        # -32000 is both the TypeScript SDK's "Bad Request" and the Python SDK's "the
        # connection closed": only an HTTP answer, or the words, tell them apart.
        return self.last_status in _ERA_STATUSES or any(w in words for w in _ERA_WORDS)

    @property
    def abandons_locally(self) -> bool:
        """True when giving up on a request never sends anything to the server: over HTTP on
        the stateless protocol, the SDK's transport turns the courtesy
        ``notifications/cancelled`` into closing that request's response."""
        return self.command is None and self.protocol == "auto"

    @property
    def alive(self) -> bool:
        return self.session is not None and not self.task.done()

    async def shutdown(self, grace: float) -> None:
        """Ask the owner task to close the session and wait for it (bounded)."""
        self.stop.set()
        if self.task.done():
            return
        done: set[asyncio.Task[None]] = set()
        if grace > 0:
            done, _ = await asyncio.wait({self.task}, timeout=grace)
        if not done:
            # An anyio scope, not task.cancel(): a one-shot CancelledError is caught by the
            # transport's cleanup, which then waits on the server again (its DELETE); a
            # cancelled scope keeps cancelling every await inside it.
            self.scope.cancel()
            done, _ = await asyncio.wait({self.task}, timeout=_CANCEL_GRACE)
        if not done:  # pragma: no cover - only if the SDK shields a wait forever
            logger.warning("MCP session task of %r did not stop; abandoning it", self.namespace)
            self.task.cancel()


def forget_when_done(tasks: set[asyncio.Task[Any]]) -> Callable[[asyncio.Task[Any]], None]:
    """A done-callback that drops a background task from ``tasks`` and retrieves its result,
    so an abandoned request never logs "exception was never retrieved"."""

    def done(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the caller has already been answered

    return done


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[exc]``."""
    if isinstance(exc, BaseExceptionGroup):
        found: list[BaseException] = []
        for inner in exc.exceptions:
            found.extend(leaves(inner))
        return found
    return [exc]


async def run_on_session(
    session: Session,
    op: Callable[[ClientSession], Coroutine[Any, Any, _T]],
    limit: float | None,
    background: set[asyncio.Task[Any]],
) -> _T:
    """Run the request ``op`` on ``session`` within ``limit`` seconds (None: no limit);
    raises ``TimeoutError`` when it runs out.

    Giving up on a request makes the SDK send a courtesy ``notifications/cancelled`` and wait
    (shielded, up to 5 s) until it is written. On the stateless protocol over HTTP that costs
    nothing: the transport turns it into closing the request's own response, never a request
    to the server. So there the call runs in the caller's task, and a timeout or a cancelled
    caller returns at once (a task per call measured 2-3% of a call's time against the local
    test server).

    On the handshake protocol, and over stdio, the notification goes to the server, which may
    be stalled: there the call runs in a task of its own, so neither our timeout nor a
    cancelled caller waits on it. On our timeout the session is torn down first, so that send
    fails at once; a cancelled caller leaves the request to finish in the background (held in
    ``background``, the caller's set, until it does).
    """
    assert session.session is not None
    if session.abandons_locally:
        async with asyncio.timeout(limit):
            return await op(session.session)
    task = asyncio.create_task(op(session.session))
    try:
        done, _ = await asyncio.wait({task}, timeout=limit)
    except BaseException:
        # Our caller was cancelled; let the request's own cleanup finish in the background.
        task.cancel()
        background.add(task)
        task.add_done_callback(forget_when_done(background))
        raise
    if not done:
        await session.shutdown(0)
        task.cancel()
        background.add(task)
        task.add_done_callback(forget_when_done(background))
        raise TimeoutError
    return task.result()


def _with_extensions(
    kwargs: dict[str, Any], extensions: dict[str, dict[str, Any]] | None
) -> dict[str, Any]:
    """The SDK session's keyword arguments with ``extensions`` declared beside the tasks
    extension."""
    if extensions:
        kwargs = {**kwargs, "extensions": {**kwargs.get("extensions", {}), **extensions}}
    return kwargs
