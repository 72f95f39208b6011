"""Serving the local MCP servers over Streamable HTTP on 127.0.0.1, with switches to make them
slow or fail.

``McpTestServer`` runs one server in-process under uvicorn (port 0 unless given, TCP_NODELAY)
and can be stopped and started again on the same port ("server down, then back").
``ServerControl`` is a mutable set of switches checked on every HTTP request: a bearer-token
check, artificial latency, answering 401, expiring sessions (404), stalling. ``serve()`` is the
short form for tests: ``async with serve("notes") as url``.

Other test servers (e.g. the local OAuth authorization server) can reuse this by passing any
ASGI app factory as ``server``, or an ``MCPServer`` built with their auth settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections import Counter
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterator,
    MutableMapping,
)
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import uvicorn
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer

from glove_core.resources import AsyncResource
from glove_mcp.testing.servers import build_notes_server, build_paged_server, build_tracker_server

__all__ = ["ASGIApp", "McpTestServer", "ServerControl", "ServerKind", "build_server", "serve"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
"""An ASGI application."""

ServerKind = Literal["notes", "tracker", "paged", "sizes"]
"""The built-in servers ``serve`` and ``McpTestServer`` accept by name."""

TokenCheck = Collection[str] | Callable[[str], bool]


@dataclass
class ServerControl:
    """Switches checked on every HTTP request to a test server; change them at any time.

    Attributes:
        tokens: None (no check), a collection of accepted bearer tokens, or a predicate on the
            token. A request without an accepted token gets 401 with ``WWW-Authenticate``.
        latency: seconds added before every request is handled.
        connect_latency: seconds added before each handshake request (``initialize`` or
            ``server/discover``): what opening a connection to a distant server costs.
        legacy_only: behave like a handshake-era (1.x) server: ``server/discover`` gets the
            400 "Missing session ID" such a server answers any request before ``initialize``.
        discover_rejection: with ``legacy_only``, the raw answer ``server/discover`` gets
            instead: ``(status, content_type, body)`` — how older servers written elsewhere
            reject it (the TypeScript SDK: 400 with JSON-RPC -32000 "Unsupported protocol
            version").
        answer_401: answer every request with 401, whatever its token.
        insufficient_scope: answer every ``tools/call`` with 403 ``insufficient_scope``,
            naming this scope in ``WWW-Authenticate``.
        post_only: answer 404 to a ``GET`` (or ``DELETE``) of the MCP endpoint, as servers
            that route only ``POST`` do (many hosted ones).
        requests: how many HTTP requests arrived (counted before any check).
        handshakes: how many handshake requests (``initialize`` or ``server/discover``)
            arrived: one per new connection with the stateless protocol or the handshake.
        discovers: how many of those were ``server/discover``.
        methods: how many POSTs arrived per JSON-RPC method (``methods["tools/list"]``).
        seen_tokens: the bearer token of every request, in order (test double: tokens are fake).
        stalled_requests: how many requests were held by ``stall()`` so far.
    """

    tokens: TokenCheck | None = None
    latency: float = 0.0
    connect_latency: float = 0.0
    legacy_only: bool = False
    discover_rejection: tuple[int, str, bytes] | None = None
    answer_401: bool = False
    post_only: bool = False
    insufficient_scope: str | None = None
    requests: int = 0
    handshakes: int = 0
    discovers: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    seen_tokens: list[str | None] = field(default_factory=list)
    _sessions: set[str] = field(default_factory=set, repr=False)
    _expired: set[str] = field(default_factory=set, repr=False)
    _flowing: asyncio.Event | None = field(default=None, repr=False)
    stalled_requests: int = 0
    _stall_seen: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def expire_sessions(self) -> int:
        """Forget every session seen so far: their next request gets 404 (session expired).

        Returns:
            How many sessions were expired.
        """
        count = len(self._sessions)
        self._expired |= self._sessions
        self._sessions = set()
        return count

    def stall(self) -> None:
        """Hold every new request until ``release()``."""
        if self._flowing is None:
            self._flowing = asyncio.Event()
        self._flowing.clear()

    async def wait_stalled(self, count: int = 1) -> None:
        """Wait until at least ``count`` requests are being held by ``stall()``."""
        while self.stalled_requests < count:
            self._stall_seen.clear()
            await self._stall_seen.wait()

    def release(self) -> None:
        """Let stalled and new requests through."""
        if self._flowing is not None:
            self._flowing.set()

    def _token_ok(self, token: str | None) -> bool:
        if self.tokens is None:
            return True
        if token is None:
            return False
        if callable(self.tokens):
            return bool(self.tokens(token))
        return token in self.tokens


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _plain(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + extra})
    await send({"type": "http.response.body", "body": body})


_HANDSHAKES = ("initialize", "server/discover")
# What a 1.x server answers a request that is not ``initialize`` and carries no session id.
_MISSING_SESSION = {
    "jsonrpc": "2.0",
    "id": "server-error",
    "error": {"code": -32600, "message": "Bad Request: Missing session ID"},
}


async def _json(send: Send, status: int, body: object) -> None:
    await _raw(send, status, "application/json", json.dumps(body).encode())


async def _raw(send: Send, status: int, content_type: str, body: bytes) -> None:
    length = str(len(body)).encode()
    headers = [(b"content-type", content_type.encode()), (b"content-length", length)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _peek_method(receive: Receive) -> tuple[str | None, Receive]:
    """The JSON-RPC method of a request body, and a ``receive`` that replays the body."""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    body = b"".join(bytes(m.get("body", b"")) for m in messages if m["type"] == "http.request")
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    method = parsed.get("method") if isinstance(parsed, dict) else None
    pending = iter(messages)

    async def replay() -> Message:
        return next(pending, None) or await receive()

    return (method if isinstance(method, str) else None), replay


def gate(app: ASGIApp, control: ServerControl, path: str = "/mcp") -> ASGIApp:
    """Wrap an ASGI app so every HTTP request goes through ``control``'s switches."""

    async def gated(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        control.requests += 1
        if control.post_only and scope.get("method") != "POST" and scope.get("path") == path:
            await _plain(send, 404, b"Not Found", [])
            return
        session = _header(scope, b"mcp-session-id")
        method = None
        if scope.get("method") == "POST":
            method, receive = await _peek_method(receive)
            if method is not None:
                control.methods[method] += 1
        handshake = method in _HANDSHAKES
        if handshake:
            control.handshakes += 1
            control.discovers += method == "server/discover"
        auth = _header(scope, b"authorization")
        token = auth[7:] if auth is not None and auth.lower().startswith("bearer ") else None
        control.seen_tokens.append(token)
        if control._flowing is not None and not control._flowing.is_set():
            control.stalled_requests += 1
            control._stall_seen.set()
            await control._flowing.wait()
        if handshake and control.connect_latency > 0:
            await asyncio.sleep(control.connect_latency)
        if control.latency > 0:
            await asyncio.sleep(control.latency)
        if control.answer_401 or not control._token_ok(token):
            challenge = b'Bearer realm="glove-test", error="invalid_token"'
            await _plain(send, 401, b"unauthorized", [(b"www-authenticate", challenge)])
            return
        if control.insufficient_scope is not None and method == "tools/call":
            needed = f'Bearer error="insufficient_scope", scope="{control.insufficient_scope}"'
            await _plain(send, 403, b"insufficient scope", [(b"www-authenticate", needed.encode())])
            return
        if control.legacy_only and method == "server/discover":
            if control.discover_rejection is None:
                await _json(send, 400, _MISSING_SESSION)
            else:
                status, content_type, body = control.discover_rejection
                await _raw(send, status, content_type, body)
            return
        if session is not None and session in control._expired:
            await _plain(send, 404, b"session not found", [])
            return

        async def send_tracking(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", ()):
                    if bytes(key).lower() == b"mcp-session-id":
                        control._sessions.add(bytes(value).decode("latin-1"))
            await send(message)

        await app(scope, receive, send_tracking)

    return gated


def build_server(kind: ServerKind) -> MCPServer | Server[Any]:
    """A fresh built-in server by name."""
    if kind == "notes":
        return build_notes_server()
    if kind == "tracker":
        return build_tracker_server()
    if kind == "paged":
        return build_paged_server()
    if kind == "sizes":
        from glove_mcp.testing.sizes_server import build_sizes_server

        return build_sizes_server()
    raise ValueError(f"unknown test server {kind!r}: use 'notes', 'tracker', 'paged' or 'sizes'")


class _CutStreams(logging.Filter):
    """Drops what uvicorn logs when a test server's shutdown cuts the requests still open (an
    SSE stream, a slow tool call) after its 50 ms grace: that is the harness's design, and a
    traceback per cut request would bury a test's real output."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == "Cancel %s running task(s), timeout graceful shutdown exceeded":
            return False
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, asyncio.CancelledError)


_CUT_STREAMS = _CutStreams()


class _InProcessServer(uvicorn.Server):
    """uvicorn without signal capture (the test process keeps its own Ctrl+C handling) and
    without its 100 ms polling loop: ``exit()`` stops it at once, where uvicorn would notice
    ``should_exit`` up to a tick later (a suite starts and stops hundreds of servers)."""

    _exit: asyncio.Event | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def main_loop(self) -> None:
        self._exit = asyncio.Event()
        if self.should_exit:
            return
        await self.on_tick(0)  # the default headers, once
        await self._exit.wait()

    def exit(self) -> None:
        """Ask the server to shut down now."""
        self.should_exit = True
        if self._exit is not None:
            self._exit.set()


class McpTestServer(AsyncResource):
    """One MCP server served over Streamable HTTP by uvicorn on loopback.

    Args:
        server: a built-in server name, an ``MCPServer`` / low-level ``Server`` (its
            ``streamable_http_app`` is rebuilt on every start), or a factory returning any
            ASGI app (e.g. one with an OAuth authorization server in front).
        control: the switches; a fresh ``ServerControl`` when omitted.
        tokens: shortcut for ``control.tokens``.
        latency: shortcut for ``control.latency``.
        connect_latency: shortcut for ``control.connect_latency``.
        host: the interface to bind; loopback by default.
        port: 0 picks a free port; ``stop()`` and ``start()`` keep the port.
        path: the MCP endpoint path.
        json_response: answer with JSON instead of SSE.
    """

    def __init__(
        self,
        server: ServerKind | MCPServer | Server[Any] | Callable[[], ASGIApp] = "notes",
        *,
        control: ServerControl | None = None,
        tokens: TokenCheck | None = None,
        latency: float = 0.0,
        connect_latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/mcp",
        json_response: bool = False,
    ) -> None:
        self.server = build_server(server) if isinstance(server, str) else server
        self.control = control if control is not None else ServerControl()
        if tokens is not None:
            self.control.tokens = tokens
        if latency:
            self.control.latency = latency
        if connect_latency:
            self.control.connect_latency = connect_latency
        self.host = host
        self.port = port
        self.path = path
        self.json_response = json_response
        self._uvicorn: _InProcessServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        """The MCP endpoint, e.g. ``http://127.0.0.1:53121/mcp`` (valid after ``start()``)."""
        if self.port == 0:
            raise RuntimeError("the test server has no port yet: start() it first")
        return f"http://{self.host}:{self.port}{self.path}"

    @property
    def running(self) -> bool:
        """True between ``start()`` and ``stop()``."""
        return self._task is not None

    def _app(self) -> ASGIApp:
        if isinstance(self.server, MCPServer | Server):
            app: ASGIApp = self.server.streamable_http_app(
                streamable_http_path=self.path, json_response=self.json_response
            )
        else:
            app = self.server()
        return gate(app, self.control, self.path)

    async def start(self) -> str:
        """Bind (on the same port as before, if any) and serve; returns the URL."""
        if self._task is not None:
            return self.url
        # Without TCP_NODELAY every small JSON response waits ~40 ms for delayed ACKs.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(128)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            lifespan="on",
            # Open SSE streams would hold shutdown; cut them after 50 ms (int in the stubs).
            timeout_graceful_shutdown=cast(int, 0.05),
            access_log=False,
            ws="none",
        )
        logging.getLogger("uvicorn.error").addFilter(_CUT_STREAMS)  # once: it is one object
        server = _InProcessServer(config)
        self._uvicorn, self._socket = server, sock
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name=f"mcp-test:{self.port}")
        while not server.started:
            if self._task.done():
                await self._task
                raise RuntimeError(f"test server on port {self.port} stopped during startup")
            await asyncio.sleep(0.001)
        return self.url

    async def stop(self) -> None:
        """Stop serving and close the listening socket: new connections are refused."""
        task, server, sock = self._task, self._uvicorn, self._socket
        self._task = self._uvicorn = self._socket = None
        if server is not None:
            server.exit()
            self.control.release()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if sock is not None:
            sock.close()

    async def aclose(self) -> None:
        """The same as ``stop()``, under ``AsyncResource``'s name."""
        await self.stop()

    async def _enter(self) -> None:
        await self.start()


@contextlib.asynccontextmanager
async def serve(
    server: ServerKind | MCPServer | Server[Any] | Callable[[], ASGIApp] = "notes",
    *,
    control: ServerControl | None = None,
    tokens: TokenCheck | None = None,
    latency: float = 0.0,
    connect_latency: float = 0.0,
) -> AsyncIterator[str]:
    """Serve one MCP server in-process for the duration of the block; yields its URL.

    Example:
        >>> async with serve("notes", tokens={"secret"}) as url:  # doctest: +SKIP
        ...     ...
    """
    async with McpTestServer(
        server,
        control=control,
        tokens=tokens,
        latency=latency,
        connect_latency=connect_latency,
    ) as running:
        yield running.url
