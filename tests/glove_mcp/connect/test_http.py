"""HTTP of MCP connections, against a real notes server over loopback: one transport shared by
the sessions of a pool, no standalone server-to-client GET stream, a POST's SSE response closed
early keeps its socket, and the environment's proxies are honoured."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx2
import pytest

from glove_mcp import GloveMcpError, connect_mcp
from glove_mcp.connect import McpClientPool
from glove_mcp.testing import McpTestServer
from glove_mcp.testing.harness import ASGIApp, Receive, Scope, Send
from glove_mcp.testing.servers import build_notes_server


@dataclass
class Seen:
    """What the server saw: (HTTP method, client port) of every request."""

    requests: list[tuple[str, int]] = field(default_factory=list)


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[str, Seen]]:
    seen = Seen()

    def app() -> ASGIApp:
        inner: ASGIApp = build_notes_server().streamable_http_app(streamable_http_path="/mcp")

        async def recording(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                seen.requests.append((scope["method"], scope["client"][1]))
            await inner(scope, receive, send)

        return recording

    async with McpTestServer(app) as server:
        yield server.url, seen


async def test_a_connection_opens_no_standalone_get_stream(
    recorded: tuple[str, Seen],
) -> None:
    url, seen = recorded
    # The handshake protocol: the SDK would send the GET right after notifications/initialized.
    async with await connect_mcp("notes", url, protocol="legacy") as conn:
        assert await conn.list_tools()
        result = await conn.call_tool("read_page", {"page_id": "p1"})
        assert not result.is_error
    methods = [method for method, _ in seen.requests]
    # initialize, notifications/initialized, tools/list, tools/call; DELETE on close.
    assert methods == ["POST", "POST", "POST", "POST", "DELETE"]


async def test_an_sse_response_closed_after_its_answer_keeps_the_socket(
    recorded: tuple[str, Seen],
) -> None:
    url, seen = recorded
    async with McpClientPool() as pool, pool.new_client(None, httpx2.Timeout(10.0)) as client:
        headers = {"accept": "application/json, text/event-stream"}
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        async with client.stream("POST", url, json=initialize, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            session = response.headers["mcp-session-id"]
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    break  # the answer is in; close before the end of the stream, as the SDK does
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        second = await client.post(
            url, json=initialized, headers={**headers, "mcp-session-id": session}
        )
        assert second.status_code == 202
    (_, first_port), (_, second_port) = seen.requests[:2]
    assert first_port == second_port


class CountingTransport(httpx2.AsyncBaseTransport):
    """A real transport that counts what goes through it and whether it was closed."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.requests = 0
        self.closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        self.closed = True
        await self.inner.aclose()


async def test_every_session_of_a_pool_sends_through_its_one_transport(
    recorded: tuple[str, Seen],
) -> None:
    url, seen = recorded
    transport = CountingTransport()
    async with McpClientPool(transport) as pool:
        for namespace in ("a", "b"):
            async with await connect_mcp(namespace, url, pool=pool) as conn:
                assert not (await conn.call_tool("read_page", {"page_id": "p1"})).is_error
        assert transport.requests == len(seen.requests) > 0
    assert not transport.closed  # given to the pool, so not the pool's to close
    await transport.aclose()


@dataclass
class FakeProxy:
    """A forward proxy that records each request line and answers 502."""

    url: str = ""
    lines: list[str] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.lines.append(head.split(b"\r\n", 1)[0].decode())
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()


@pytest.fixture
async def proxy(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProxy]:
    fake = FakeProxy()
    server = await asyncio.start_server(fake.handle, "127.0.0.1", 0)
    fake.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    monkeypatch.setenv("HTTP_PROXY", fake.url)  # NO_PROXY exempts 127.0.0.1 (conftest)
    async with server:
        yield fake


async def test_requests_go_through_the_environments_proxy(proxy: FakeProxy) -> None:
    with pytest.raises(GloveMcpError):
        await connect_mcp("far", "http://mcp.example.invalid/mcp", connect_timeout=5)
    assert proxy.lines and proxy.lines[0].startswith("POST http://mcp.example.invalid/mcp ")


async def test_hosts_no_proxy_names_are_reached_directly(
    proxy: FakeProxy, recorded: tuple[str, Seen]
) -> None:
    url, seen = recorded
    async with await connect_mcp("near", url) as conn:
        assert not (await conn.call_tool("read_page", {"page_id": "p1"})).is_error
    assert seen.requests and not proxy.lines
