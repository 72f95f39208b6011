"""HTTP for MCP connections: one shared transport, and a client of its own for each session.

``McpClientPool`` holds one ``httpx2`` transport (a connection pool and a TLS context) that
MCP connections share. The SDK's transport takes an ``httpx2.AsyncClient``, and auth lives on
the client, so each session gets an ``AsyncClient`` of its own (``new_client``), with its own
``auth`` and ``timeout``, over the shared transport: connections share sockets, never
credentials. Such a client costs about 0.05 ms to make; a transport about 60 ms (its TLS
context), which is what the pool saves.

Ownership: the pool creates its transport on first use and closes it in ``aclose()`` (a
transport passed in is never closed by the pool); a session creates its client and closes it
when the session ends, which leaves the pool's transport open. ``connect_mcp`` and ``mount_mcp``
called without ``pool=`` create a pool of their own and close it when they close.

Two things each session's client does so that a session costs fewer requests and sockets
(measured on a 10-server mount against the notes test server: about 3 ms less client CPU and
2-3 ms less server CPU per server, and two TCP connections per session, close included,
instead of five):

- It opens the standalone server-to-client SSE stream only when the session needs it. The
  SDK's transport sends that ``GET`` right after ``notifications/initialized``, for messages a
  server sends outside any request (requests for sampling, elicitation or roots, ``list_changed``
  notifications, log messages). A session that declares none of those capabilities and wants
  none of those notifications has no use for it, and the spec makes the stream optional for
  the client, so then the client's transport answers that ``GET`` itself with an empty stream
  that stays open until the session ends: no request, no socket, no server-side stream kept
  alive for the session's whole life. Resumption ``GET``\\s (they carry ``Last-Event-ID``)
  still go to the server.
- It lets a POST's SSE response finish. The SDK closes the response as soon as the JSON-RPC
  answer has arrived, just before the server's end-of-stream, which forces HTTP/1.1 to drop the
  socket; reading that last bit first (bounded in bytes and time, after the caller already has
  its answer) returns the socket to the pool for the session's next request.

Size: every message from the server is bounded (``max_message_bytes``): a JSON response's
body in total, and each event of an SSE response (a POST's, and the standalone ``GET``
stream's, which carries many messages over the session's life, so only its events are
bounded, never the stream). Past the bound the client stops reading, closes the response and
tells the session (``on_too_large``), so the request fails with an error naming the limit
instead of the whole body being held in memory, saved and shown to a model. A body whose
``Content-Length`` is already over the bound is not read at all.

Proxies: like an ``httpx2.AsyncClient`` left to its defaults, the pool's own transport goes
through the proxies the environment names (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, or
the system's settings) except for hosts ``NO_PROXY`` exempts, and trusts ``SSL_CERT_FILE``.
"""

from __future__ import annotations

import contextlib
import re
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from ssl import SSLContext

import anyio
import httpx2

from glove_core.resources import AsyncResource
from glove_mcp.connect.list_cache import ListCache
from glove_mcp.errors import McpStateError

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "McpClientPool", "MessageTooLarge", "observe_status"]

_DRAIN_BYTES = 64 * 1024
_DRAIN_SECONDS = 0.5

DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""The most bytes one message from an MCP server may take (8 MiB): room for the largest
image a model takes (5 MiB, about 6.7 MiB in base64) and far more text than a model reads."""

# An SSE event ends at a blank line, whichever line ending the server uses.
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


class McpClientPool(AsyncResource):
    """One HTTP transport (sockets, TLS context) that MCP connections share.

    Pass one pool to every ``connect_mcp`` and ``mount_mcp`` that should share sockets (say,
    one per process in a server that mounts per session) and close it after them; without
    ``pool=`` each connection or mount makes its own and closes it.

    Args:
        transport: the transport to share, e.g. ``httpx2.AsyncHTTPTransport(verify=...,
            proxy=...)``; the pool never closes it. When omitted, the pool creates one on
            first use (honouring the environment's proxy and certificate settings) and closes
            it in ``aclose()``.
        list_cache: where the connections of this pool keep the list pages servers allow
            to be cached (``ttlMs``/``cacheScope``; see ``glove_mcp.connect.list_cache``):
            public pages serve every connection of the pool, private ones only their own.
            A fresh ``ListCache()`` when omitted; ``ListCache(enabled=False)`` lists every
            time.
    """

    def __init__(
        self,
        transport: httpx2.AsyncBaseTransport | None = None,
        *,
        list_cache: ListCache | None = None,
    ) -> None:
        self._transport = transport
        self.list_cache = list_cache if list_cache is not None else ListCache()
        """The list pages shared by the connections of this pool."""
        self._owned = transport is None
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether ``aclose()`` was called."""
        return self._closed

    @property
    def has_transport(self) -> bool:
        """Whether the transport exists yet: it is made on first HTTP use (a pool that only
        served stdio servers never makes one)."""
        return self._transport is not None

    @property
    def transport(self) -> httpx2.AsyncBaseTransport:
        """The shared transport (created on first access).

        Raises:
            McpStateError: the pool is closed.
        """
        if self._closed:
            raise McpStateError("this McpClientPool is closed; create a new one")
        if self._transport is None:
            self._transport = _environment_transport()
        return self._transport

    def new_client(
        self,
        auth: httpx2.Auth | None = None,
        timeout: httpx2.Timeout | float = 30.0,
        *,
        server_stream: bool | Callable[[], bool] = True,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_too_large: Callable[[int], None] | None = None,
    ) -> httpx2.AsyncClient:
        """A new client for one session, sending through the shared transport. The caller owns
        it and closes it; closing it leaves the shared transport open.

        Args:
            auth: the session's credentials, applied to every request.
            timeout: the session's timeouts.
            server_stream: False answers the SDK's standalone server-to-client SSE ``GET``
                locally with an idle stream (see the module docstring); a function is asked
                when that ``GET`` is sent (after the handshake, so it can look at what the
                server declared).
            max_message_bytes: the most bytes of one message (a JSON body, one SSE event);
                reading stops past it (see the module docstring).
            on_too_large: called with the limit when a response went past it, just before
                reading it fails.

        Raises:
            McpStateError: the pool is closed.
        """
        return httpx2.AsyncClient(
            auth=auth,
            timeout=timeout,
            transport=_SessionTransport(
                self.transport,
                server_stream=server_stream,
                max_message_bytes=max_message_bytes,
                on_too_large=on_too_large,
            ),
            follow_redirects=False,
            trust_env=False,  # the shared transport already took what the environment says
        )

    async def aclose(self) -> None:
        """Close the transport if the pool created it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._owned and self._transport is not None:
            await self._transport.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<McpClientPool {state}>"


# httpx2's default caps a transport at 100 connections, and every open MCP session may hold
# one (its stream): a server process with more open sessions than that saw new sessions fail
# to connect ("connection closed") while waiting for a free connection. The server bounds its
# open sessions itself (``max_sessions``), so the shared transport need not.
_POOL_LIMITS = httpx2.Limits(max_connections=None, max_keepalive_connections=100)


def _environment_transport() -> httpx2.AsyncBaseTransport:
    """A direct transport, or a router through the environment's proxies when it names any."""
    context = httpx2.create_ssl_context()  # the costly part: made once, shared by all routes
    direct = httpx2.AsyncHTTPTransport(verify=context, limits=_POOL_LIMITS)
    found = urllib.request.getproxies()
    proxies = {
        scheme: url if "://" in url else f"http://{url}"
        for scheme in ("http", "https", "all")
        if (url := found.get(scheme))
    }
    return _ProxyRouter(direct, proxies, context) if proxies else direct


class _ProxyRouter(httpx2.AsyncBaseTransport):
    """Sends each request through its scheme's proxy, or directly for exempt hosts."""

    def __init__(
        self, direct: httpx2.AsyncHTTPTransport, proxies: Mapping[str, str], context: SSLContext
    ) -> None:
        self._direct = direct
        self._proxies = dict(proxies)
        self._context = context
        self._through: dict[str, httpx2.AsyncHTTPTransport] = {}  # proxy URL -> transport
        self._exempt: dict[str, bool] = {}  # host -> NO_PROXY says go direct

    def _route(self, url: httpx2.URL) -> httpx2.AsyncHTTPTransport:
        proxy = self._proxies.get(url.scheme) or self._proxies.get("all")
        if proxy is None:
            return self._direct
        exempt = self._exempt.get(url.host)
        if exempt is None:
            exempt = self._exempt[url.host] = bool(urllib.request.proxy_bypass(url.host))
        if exempt:
            return self._direct
        transport = self._through.get(proxy)
        if transport is None:
            transport = httpx2.AsyncHTTPTransport(
                verify=self._context, proxy=proxy, limits=_POOL_LIMITS
            )
            self._through[proxy] = transport
        return transport

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._route(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        transports, self._through = [self._direct, *self._through.values()], {}
        for transport in transports:
            await transport.aclose()


def _mentions_sse(headers: httpx2.Headers, name: str) -> bool:
    return "text/event-stream" in headers.get(name, "").lower()


class _IdleStream(httpx2.AsyncByteStream):
    """The body of the locally answered server-to-client stream: no events, never ends (the
    transport cancels its reader when the session closes)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        await anyio.sleep_forever()
        yield b""  # pragma: no cover - sleep_forever only returns by raising

    async def aclose(self) -> None:
        return None


class _DrainOnClose(httpx2.AsyncByteStream):
    """Wraps a response body so that closing it early first reads what is left (within
    ``_DRAIN_BYTES`` and ``_DRAIN_SECONDS``): a body read to its end keeps the socket open."""

    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner
        self._chunks: AsyncIterator[bytes] | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self._chunks = self._inner.__aiter__()
        async for chunk in self._chunks:
            yield chunk

    async def aclose(self) -> None:
        chunks, self._chunks = self._chunks, None
        try:
            if chunks is not None:
                left = _DRAIN_BYTES
                with anyio.move_on_after(_DRAIN_SECONDS):
                    async for chunk in chunks:
                        left -= len(chunk)
                        if left < 0:
                            break  # a server still streaming: give the socket up instead
        except httpx2.HTTPError:
            pass  # the body broke while draining: nothing to keep; closing below drops it
        finally:
            await self._inner.aclose()


class MessageTooLarge(httpx2.SSEError):
    """A message from the server went past ``max_message_bytes``; reading it stopped.

    An ``SSEError`` (a transport error), so the SDK fails only the request whose response it
    was, or lets its standalone stream reconnect, and never retries by resuming the stream
    (which would replay the same message)."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit = limit
        super().__init__(f"{what} is larger than {limit:,} bytes (max_message_bytes)")


class _JsonTooLarge(MessageTooLarge, httpx2.StreamError):
    """The same for a JSON body, which the SDK reads as a broken stream: it fails that one
    request (a ``StreamError``)."""


class _Bounded(httpx2.AsyncByteStream):
    """A response body read only up to ``limit`` bytes: in total, or per SSE event."""

    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        limit: int,
        *,
        per_event: bool,
        declared: int | None,
        on_too_large: Callable[[int], None] | None,
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._per_event = per_event
        self._declared = declared
        self._on_too_large = on_too_large
        self._count = 0  # bytes of the body, or of the SSE event being read
        self._tail = b""  # the last bytes of the previous chunk: an event end may straddle it

    def _fail(self) -> MessageTooLarge:
        if self._on_too_large is not None:
            self._on_too_large(self._limit)
        if self._per_event:
            return MessageTooLarge(self._limit, "an event of the server's SSE stream")
        return _JsonTooLarge(self._limit, "the server's response")

    def _feed(self, chunk: bytes) -> None:
        if not self._per_event:
            self._count += len(chunk)
            if self._count > self._limit:
                raise self._fail()
            return
        data = self._tail + chunk
        before = self._count - len(self._tail)  # bytes of the current event before ``data``
        start = 0
        for end in _EVENT_END.finditer(data):
            if end.end() <= len(self._tail):
                continue  # seen with the previous chunk
            if before + end.start() - start > self._limit:
                raise self._fail()
            before, start = 0, end.end()
        self._count = before + len(data) - start
        if self._count > self._limit:
            raise self._fail()
        self._tail = data[-3:]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._declared is not None and self._declared > self._limit and not self._per_event:
            raise self._fail()  # not one byte of it is worth reading
        async for chunk in self._inner:
            self._feed(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _declared_length(headers: httpx2.Headers) -> int | None:
    value = headers.get("content-length", "")
    return int(value) if value.isdigit() else None


class _SessionTransport(httpx2.AsyncBaseTransport):
    """One session's view of the shared transport (see the module docstring); closing it
    leaves the shared transport open."""

    def __init__(
        self,
        shared: httpx2.AsyncBaseTransport,
        *,
        server_stream: bool | Callable[[], bool],
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_too_large: Callable[[int], None] | None = None,
    ) -> None:
        self._shared = shared
        self._server_stream = server_stream
        self._limit = max_message_bytes
        self._on_too_large = on_too_large

    def _opens_server_stream(self) -> bool:
        wanted = self._server_stream
        return wanted() if callable(wanted) else wanted

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if (
            request.method == "GET"
            and not self._opens_server_stream()
            and "last-event-id" not in request.headers
            and _mentions_sse(request.headers, "accept")
        ):
            return httpx2.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=_IdleStream(),
                request=request,
            )
        response = await self._shared.handle_async_request(request)
        body = response.stream
        if not isinstance(body, httpx2.AsyncByteStream):
            return response
        sse = _mentions_sse(response.headers, "content-type")
        bounded = _Bounded(
            body,
            self._limit,
            per_event=sse,
            declared=_declared_length(response.headers),
            on_too_large=self._on_too_large,
        )
        response.stream = _DrainOnClose(bounded) if sse and request.method == "POST" else bounded
        return response

    async def aclose(self) -> None:
        return None  # the shared transport belongs to the pool


class _Observed(httpx2.Auth):
    """Wraps the connection's auth to see the final response of every request."""

    requires_request_body = True

    def __init__(
        self, inner: httpx2.Auth | None, on_response: Callable[[httpx2.Response], None]
    ) -> None:
        self._inner = inner
        self._on_response = on_response

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._inner is None:
            response = yield request
            await _read_refusal(response)
            self._on_response(response)
            return
        flow = self._inner.async_auth_flow(request)
        outgoing = await flow.__anext__()
        while True:
            response = yield outgoing
            try:
                outgoing = await flow.asend(response)
            except StopAsyncIteration:
                await _read_refusal(response)
                self._on_response(response)
                return


async def _read_refusal(response: httpx2.Response) -> None:
    """Read the body of a refusal (status 400 or more) now, so the observer can quote it; it
    stays cached for the SDK, and the transport bounds it at ``max_message_bytes``."""
    if response.status_code < 400:
        return
    # A failed read: the SDK meets the same failure when it reads, and reports it.
    with contextlib.suppress(httpx2.HTTPError, httpx2.StreamError, OSError):
        await response.aread()


def observe_status(
    inner: httpx2.Auth | None, on_response: Callable[[httpx2.Response], None]
) -> httpx2.Auth:
    """Wrap ``inner`` so ``on_response`` sees the final response of every request (after the
    inner flow's own retries, e.g. a 401 retried with a fresh token); only its status and
    headers are there to read, the body may still be streaming, except for a refusal (status
    400 or more), whose body is read first."""
    return _Observed(inner, on_response)
