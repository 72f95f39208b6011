"""The shared HTTP client of MCP connections, and the per-connection view of it.

``McpClientPool`` holds one ``httpx2.AsyncClient`` (one connection pool, one TLS context) for
every MCP connection of a process. The SDK's transport takes an ``AsyncClient``, and auth lives
on the client, so each connection gets a light ``_ScopedClient`` whose requests are sent
through the shared client with that connection's ``auth`` and ``timeout``: connections share
sockets, never credentials.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx2

from glove_mcp.errors import McpStateError

__all__ = ["McpClientPool", "observe_status"]


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

    @property
    def client(self) -> httpx2.AsyncClient:
        """The shared client (created on first access)."""
        if self._closed:
            raise McpStateError("this McpClientPool is closed; create a new one")
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=self._timeout, follow_redirects=False)
        return self._client

    def scoped(self, auth: httpx2.Auth | None, timeout: httpx2.Timeout) -> httpx2.AsyncClient:
        """A light client for one connection: its requests go through the shared client, with
        this connection's ``auth`` and ``timeout``."""
        return _ScopedClient(self.client, auth, timeout)

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


class _Unused(httpx2.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError("scoped MCP clients send through the shared client")


class _ScopedClient(httpx2.AsyncClient):
    """Builds requests with its own settings and sends them through the shared client."""

    def __init__(
        self, shared: httpx2.AsyncClient, auth: httpx2.Auth | None, timeout: httpx2.Timeout
    ) -> None:
        super().__init__(transport=_Unused(), trust_env=False, timeout=timeout)
        self._shared = shared
        self._scoped_auth = auth

    async def send(
        self,
        request: httpx2.Request,
        *,
        stream: bool = False,
        auth: Any = None,
        follow_redirects: Any = False,
    ) -> httpx2.Response:
        chosen = auth if isinstance(auth, httpx2.Auth) else self._scoped_auth
        return await self._shared.send(
            request, stream=stream, auth=chosen, follow_redirects=bool(follow_redirects)
        )

    async def aclose(self) -> None:
        # The shared client belongs to the pool.
        return None


class _Observed(httpx2.Auth):
    """Wraps the connection's auth to see the final HTTP status of every request."""

    requires_request_body = True

    def __init__(self, inner: httpx2.Auth | None, on_status: Callable[[int], None]) -> None:
        self._inner = inner
        self._on_status = on_status

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self._inner is None:
            response = yield request
            self._on_status(response.status_code)
            return
        flow = self._inner.async_auth_flow(request)
        outgoing = await flow.__anext__()
        while True:
            response = yield outgoing
            try:
                outgoing = await flow.asend(response)
            except StopAsyncIteration:
                self._on_status(response.status_code)
                return


def observe_status(inner: httpx2.Auth | None, on_status: Callable[[int], None]) -> httpx2.Auth:
    """Wrap ``inner`` so ``on_status`` sees the final HTTP status of every request (after the
    inner flow's own retries, e.g. a 401 retried with a fresh token)."""
    return _Observed(inner, on_status)
