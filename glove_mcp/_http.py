"""The shared HTTP client of MCP connections, and the per-connection view of it.

``McpClientPool`` holds one ``httpx2.AsyncClient`` (one connection pool, one TLS context) for
every MCP connection of a process. The SDK's transport takes an ``AsyncClient``, and auth lives
on the client, so each connection gets a light ``_ScopedClient`` whose requests are sent
through the shared client with that connection's ``auth`` and ``timeout``: connections share
sockets, never credentials.

Two things the scoped client does so that a session costs fewer requests and sockets (measured
on a 10-server mount against the notes test server: about 3 ms less client CPU and 2-3 ms less
server CPU per server, and two TCP connections per session, close included, instead of five):

- It does not open the standalone server-to-client SSE stream. The SDK's transport sends that
  ``GET`` right after ``notifications/initialized``, for messages a server sends outside any
  request (``list_changed`` notifications, unsolicited pings). glove_mcp uses none of them, and
  the spec makes the stream optional for the client, so the scoped client answers that ``GET``
  itself with an empty stream that stays open until the session ends: no request, no socket,
  no server-side stream kept alive for the session's whole life. Resumption ``GET``s (they carry
  ``Last-Event-ID``) still go to the server.
- It lets a POST's SSE response finish. The SDK closes the response as soon as the JSON-RPC
  answer has arrived, just before the server's end-of-stream, which forces HTTP/1.1 to drop the
  socket; reading that last bit first (bounded in bytes and time, after the caller already has
  its answer) returns the socket to the pool for the session's next request.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import anyio
import httpx2

from glove_mcp.errors import McpStateError

__all__ = ["McpClientPool", "borrow_pool", "observe_status", "return_pool"]


class McpClientPool:
    """Holds the one ``httpx2.AsyncClient`` that MCP connections of a process share.

    Args:
        client: an existing client to use (never closed by the pool); when omitted one is
            created on first use and closed by ``aclose()``.
        timeout: the created client's timeout in seconds (connect, write, pool); reads wait up
            to ``read_timeout`` because tool calls and SSE streams can be slow.
        read_timeout: seconds a response may stay silent.
    """

    def __init__(
        self,
        client: httpx2.AsyncClient | None = None,
        *,
        timeout: float = 30.0,
        read_timeout: float = 300.0,
    ) -> None:
        self._client = client
        self._owned = client is None
        self._timeout = httpx2.Timeout(timeout, read=read_timeout)
        self._closed = False
        self._borrowers = 0  # users counted by borrow_pool / return_pool

    @property
    def client(self) -> httpx2.AsyncClient:
        """The shared client (created on first access)."""
        if self._closed:
            raise McpStateError("this McpClientPool is closed; create a new one")
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=self._timeout, follow_redirects=False)
        return self._client

    def scoped(
        self, auth: httpx2.Auth | None, timeout: httpx2.Timeout, *, server_stream: bool = True
    ) -> httpx2.AsyncClient:
        """A light client for one connection: its requests go through the shared client, with
        this connection's ``auth`` and ``timeout``.

        Args:
            auth: the connection's credentials, applied per request.
            timeout: the connection's timeouts.
            server_stream: False answers the transport's standalone server-to-client SSE
                ``GET`` locally with an idle stream (see the module docstring).
        """
        return _ScopedClient(self.client, auth, timeout, server_stream=server_stream)

    async def aclose(self) -> None:
        """Close the client if the pool created it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._owned and self._client is not None:
            await self._client.aclose()

    async def __aenter__(self) -> McpClientPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# The pool that connections and mounts created without ``pool=`` share, one per event loop
# (an AsyncClient's sockets belong to the loop that opened them), counted by its users.
_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, McpClientPool] = (
    weakref.WeakKeyDictionary()
)


def borrow_pool() -> McpClientPool:
    """The running event loop's shared pool, counting one more user; hand it back with
    ``return_pool``. So every connection of a process shares one client (one TLS context,
    one set of sockets) without anyone having to pass a pool, and the client is closed when
    the last user is done. Outside an event loop: a private pool for one user."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    pool = _SHARED.get(loop) if loop is not None else None
    if pool is None:
        pool = McpClientPool()
        if loop is not None:
            _SHARED[loop] = pool
    pool._borrowers += 1
    return pool


async def return_pool(pool: McpClientPool) -> None:
    """One user of a ``borrow_pool`` pool is done; the last one closes it."""
    pool._borrowers -= 1
    if pool._borrowers > 0:
        return
    for loop, shared in list(_SHARED.items()):
        if shared is pool:
            del _SHARED[loop]  # before closing: a borrower arriving meanwhile gets a new pool
    await pool.aclose()


class _Unused(httpx2.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError("scoped MCP clients send through the shared client")


_DRAIN_BYTES = 64 * 1024
_DRAIN_SECONDS = 0.5


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


class _ScopedClient(httpx2.AsyncClient):
    """Builds requests with its own settings and sends them through the shared client."""

    def __init__(
        self,
        shared: httpx2.AsyncClient,
        auth: httpx2.Auth | None,
        timeout: httpx2.Timeout,
        *,
        server_stream: bool = True,
    ) -> None:
        super().__init__(transport=_Unused(), trust_env=False, timeout=timeout)
        self._shared = shared
        self._scoped_auth = auth
        self._server_stream = server_stream

    async def send(
        self,
        request: httpx2.Request,
        *,
        stream: bool = False,
        auth: Any = None,
        follow_redirects: Any = False,
    ) -> httpx2.Response:
        if (
            not self._server_stream
            and request.method == "GET"
            and "last-event-id" not in request.headers
            and _mentions_sse(request.headers, "accept")
        ):
            return httpx2.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=_IdleStream(),
                request=request,
            )
        chosen = auth if isinstance(auth, httpx2.Auth) else self._scoped_auth
        response = await self._shared.send(
            request, stream=stream, auth=chosen, follow_redirects=bool(follow_redirects)
        )
        body = response.stream
        if (
            stream
            and request.method == "POST"
            and isinstance(body, httpx2.AsyncByteStream)
            and _mentions_sse(response.headers, "content-type")
        ):
            response.stream = _DrainOnClose(body)
        return response

    async def aclose(self) -> None:
        # The shared client belongs to the pool.
        return None


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
