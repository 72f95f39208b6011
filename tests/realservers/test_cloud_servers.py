"""Cloud servers as users run them, offline: Linear's 198 tools past the listing limit, and
Notion's own server over stdio and Streamable HTTP. Their calls need the cloud; here outbound
traffic goes nowhere (``corpus``), so a call fails at once and must reach the model as a clear
tool error naming the server.

Linear (``@tacticlaunch/mcp-linear``) lists 198 tools, 70 past the default ``max_tools`` of 128:
the model is told which are held back and how to reach them, finds one by its words through
``linear__more_tools``, loads it (declared deferred, outside the cached prompt prefix) and
calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_core import Glove, ModelRequest, ScriptedModel, ToolCall, ToolResultData
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, bearer, connect_mcp, mount_mcp
from glove_mcp.errors import GloveMcpError
from glove_mcp.subscribers import McpListingLimited
from tests.realservers import corpus


def _results(glove: Glove) -> list[ToolResultData]:
    last: ModelRequest = glove.model.requests[-1]  # type: ignore[attr-defined]
    return [r.result for m in last.messages for r in (m.tool_results or [])]


def _told(request: ModelRequest, text: str) -> bool:
    return any(text in (m.text or "") for m in request.messages)


async def test_linear_tools_past_the_limit_are_found_loaded_and_called() -> None:
    corpus.require_offline()  # the last call goes to Linear's cloud
    recorder = RecordingSubscriber()
    script: list[Any] = [
        [ToolCall(id="c1", name="linear__more_tools", input={"query": "create an issue"})],
        [ToolCall(id="c2", name="linear__more_tools", input={"load": ["linear_createIssue"]})],
        [
            ToolCall(
                id="c3",
                name="linear__linear_createIssue",
                input={"title": "Printer on fire", "teamId": "team-1"},
            )
        ],
        "done",
    ]
    glove = Glove(model=ScriptedModel(script), system_prompt="t", server_mode=True)
    glove.add_subscriber(recorder)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=["linear"]), [corpus.LINEAR.entry()]
    ) as mount:
        assert len(mount.tool_names("linear")) >= 129
        await glove.build().process_request("file a bug: the printer is on fire")
    first, second, third, _ = glove.model.requests  # type: ignore[attr-defined]
    linear = [t.name for t in first.tools if t.name.startswith("linear__")]
    assert "linear__more_tools" in linear
    assert "linear__linear_createIssue" not in linear
    # Told which tools are missing (all 70 named) and how to reach them.
    [event] = recorder.of(McpListingLimited)
    assert len(event.held) == 198 - 128
    assert _told(first, "70 tools past that bound are held back")
    for name in event.held:
        assert _told(first, name)
    assert _told(first, 'call linear__more_tools with {"query": "a few words"}')
    found, loaded, called = _results(glove)
    assert found.status == "success"
    assert "linear__linear_createIssue" in str(found.data)
    assert loaded.status == "success"
    assert loaded.tool_references == ["linear__linear_createIssue"]
    assert "linear__linear_createIssue" not in {t.name for t in second.tools}
    assert "linear__linear_createIssue" in third.deferred_tools
    # Offline with a dummy token: a tool error the model can read, naming the server.
    assert called.status == "error"
    text = f"{called.message} {called.data}"
    assert "linear" in text and "Fetch failed" in text, text


async def test_notion_over_stdio_a_failed_cloud_call_is_a_clear_tool_error() -> None:
    corpus.require_offline()
    script: list[Any] = [[ToolCall(id="c1", name="notion__API-get-self", input={})], "done"]
    glove = Glove(model=ScriptedModel(script), system_prompt="t", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=["notion"]), [corpus.NOTION.entry()]
    ):
        await glove.build().process_request("who am I on Notion?")
    [result] = _results(glove)
    assert result.status == "error"
    text = f"{result.message} {result.data}"
    assert "MCP server 'notion'" in text and "ECONNREFUSED 127.0.0.1:9" in text, text


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class NotionHttp:
    """Notion's server over Streamable HTTP on 127.0.0.1 (its default host) behind
    ``--auth-token``, on one port across restarts; its cloud calls go to the closed proxy
    port."""

    def __init__(self, token: str) -> None:
        corpus.NOTION.require()
        self.token = token
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._process: asyncio.subprocess.Process | None = None
        self._drain: asyncio.Task[bytes] | None = None

    async def start(self) -> None:
        argv = corpus.NOTION.argv(
            "--transport", "http", "--port", str(self.port), "--auth-token", self.token
        )
        env = {"PATH": os.environ.get("PATH", ""), **corpus.BLOCKED_ENV, **corpus.NOTION.env}
        process = await asyncio.create_subprocess_exec(
            *argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self._process = process
        assert process.stdout is not None
        async with asyncio.timeout(30):
            while True:
                line = (await process.stdout.readline()).decode()
                if not line:
                    pytest.fail("Notion's HTTP server stopped before it listened")
                if f"listening on 127.0.0.1:{self.port}" in line:
                    break
        # Keep reading its output, so the server never blocks on a full pipe.
        self._drain = asyncio.create_task(process.stdout.read())

    async def stop(self) -> None:
        if self._drain is not None:
            self._drain.cancel()
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            await self._process.wait()


@contextlib.asynccontextmanager
async def _notion_http(token: str) -> AsyncIterator[NotionHttp]:
    server = NotionHttp(token)
    try:
        await server.start()
        yield server
    finally:
        await server.stop()


async def test_notion_over_http_lists_the_same_tools_as_over_stdio() -> None:
    token = "glove-test-token"
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    async with _notion_http(token) as server:
        entry = McpCatalogueEntry(id="notion", name="Notion", description="d", url=server.url)
        adapter = MemoryMcpAdapter("conv", active=["notion"], tokens={"notion": token})
        async with await mount_mcp(glove, adapter, [entry]) as mount:
            over_http = dict(mount.tool_names("notion"))
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=["notion"]), [corpus.NOTION.entry()]
    ) as mount:
        over_stdio = dict(mount.tool_names("notion"))
    assert len(over_http) >= 20
    assert over_http == over_stdio


async def test_notion_over_http_after_a_restart_the_next_call_opens_a_new_session() -> None:
    """Notion's server (TypeScript SDK) answers a forgotten session with HTTP 400 "No valid
    session ID provided": the client opens a new session and sends the request again."""
    async with (
        _notion_http("glove-test-token") as server,
        await connect_mcp("notion", server.url, auth=bearer(server.token)) as connection,
    ):
        before = [t.name for t in await connection.list_tools()]
        await server.stop()
        await server.start()  # same port; it knows no session
        assert [t.name for t in await connection.list_tools()] == before
        assert connection.reconnects == 1
        # A call reaches the restarted server and runs there: its cloud request meets the
        # closed proxy port, and that is what the call says, not a lost session.
        with pytest.raises(GloveMcpError, match=r"ECONNREFUSED 127\.0\.0\.1:9"):
            await connection.call_tool("API-get-self", {})
        assert connection.reconnects == 1
