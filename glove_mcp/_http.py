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

Proxies: like an ``httpx2.AsyncClient`` left to its defaults, the pool's own transport goes
through the proxies the environment names (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, or
the system's settings) except for hosts ``NO_PROXY`` exempts, and trusts ``SSL_CERT_FILE``.
"""

from __future__ import annotations

import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from ssl import SSLContext

import anyio
import httpx2

from glove_core.resources import AsyncResource
from glove_mcp.errors import McpStateError

__all__ = ["McpClientPool", "observe_status"]

_DRAIN_BYTES = 64 * 1024
_DRAIN_SECONDS = 0.5


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
    """

    def __init__(self, transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self._transport = transport
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

        Raises:
            McpStateError: the pool is closed.
        """
        return httpx2.AsyncClient(
            auth=auth,
            timeout=timeout,
            transport=_SessionTransport(self.transport, server_stream=server_stream),
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


def _environment_transport() -> httpx2.AsyncBaseTransport:
    """A direct transport, or a router through the environment's proxies when it names any."""
    context = httpx2.create_ssl_context()  # the costly part: made once, shared by all routes
    direct = httpx2.AsyncHTTPTransport(verify=context)
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
            transport = httpx2.AsyncHTTPTransport(verify=self._context, proxy=proxy)
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


class _SessionTransport(httpx2.AsyncBaseTransport):
    """One session's view of the shared transport (see the module docstring); closing it
    leaves the shared transport open."""

    def __init__(
        self, shared: httpx2.AsyncBaseTransport, *, server_stream: bool | Callable[[], bool]
    ) -> None:
        self._shared = shared
        self._server_stream = server_stream

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
        if (
            request.method == "POST"
            and isinstance(body, httpx2.AsyncByteStream)
            and _mentions_sse(response.headers, "content-type")
        ):
            response.stream = _DrainOnClose(body)
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
            self._on_response(response)
            return
        flow = self._inner.async_auth_flow(request)
        outgoing = await flow.__anext__()
        while True:
            response = yield outgoing
            try:
                outgoing = await flow.asend(response)
            except StopAsyncIteration:
                self._on_response(response)
                return


def observe_status(
    inner: httpx2.Auth | None, on_response: Callable[[httpx2.Response], None]
) -> httpx2.Auth:
    """Wrap ``inner`` so ``on_response`` sees the final response of every request (after the
    inner flow's own retries, e.g. a 401 retried with a fresh token); only its status and
    headers are there to read, the body may still be streaming."""
    return _Observed(inner, on_response)
