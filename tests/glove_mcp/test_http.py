"""The scoped HTTP client of MCP connections, against a real notes server over loopback: no
standalone server-to-client GET stream, and a POST's SSE response closed early keeps its socket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx2
import pytest

from glove_mcp import McpClientPool, connect_mcp
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
    async with McpClientPool() as pool:
        client = pool.scoped(None, httpx2.Timeout(10.0))
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
