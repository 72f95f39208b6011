"""Stdio MCP servers: a local command instead of a URL, through the same connection and mount."""

from __future__ import annotations

import asyncio
import sys

import pytest
from pydantic import ValidationError

from glove_core import Glove, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, connect_mcp, mount_mcp
from glove_mcp.connect import ConnectionState, McpClientPool

NOTES = [sys.executable, "-m", "glove_mcp.testing", "notes", "--stdio"]


async def test_connect_list_call_and_close_from_another_task() -> None:
    connection = await connect_mcp("notes", "", command=NOTES)
    try:
        names = [t.name for t in await connection.list_tools()]
        assert "search_pages" in names
        result = await connection.call_tool("create_page", {"title": "From stdio"})
        assert not result.is_error
        assert "stdio:" in repr(connection)
    finally:
        await asyncio.create_task(connection.close())
    assert connection.state is ConnectionState.CLOSED


async def test_a_catalogue_entry_with_a_command_mounts_and_serves_tools() -> None:
    entry = McpCatalogueEntry(
        id="local", name="Local notes", description="Notes over stdio.", command=NOTES
    )
    model = ScriptedModel(
        [[ToolCall(id="c1", name="local__search_pages", input={"query": "x"})], "done"]
    )
    glove = Glove(model=model, system_prompt="s", server_mode=True)
    adapter = MemoryMcpAdapter("c", active=["local"])
    async with await mount_mcp(glove, adapter=adapter, entries=[entry]) as mount:
        glove.build()
        assert mount.loaded == ["local"]
        result = await glove.process_request("search")
    searched = [r.result for m in result.messages for r in (m.tool_results or [])]
    assert [r.status for r in searched] == ["success"]


async def test_a_command_that_does_not_start_is_a_clear_error() -> None:
    from glove_mcp import GloveMcpError

    with pytest.raises(GloveMcpError, match="local"):
        await connect_mcp("local", "", command=["/nonexistent/mcp-server"], connect_timeout=10)


def test_an_entry_needs_exactly_one_transport() -> None:
    with pytest.raises(ValidationError, match="exactly one of url"):
        McpCatalogueEntry(id="x", name="X", description="d")
    with pytest.raises(ValidationError, match="exactly one of url"):
        McpCatalogueEntry(id="x", name="X", description="d", url="http://h/mcp", command=["a"])
    with pytest.raises(ValueError, match="exactly one"):
        asyncio.run(connect_mcp("x", "http://h/mcp", command=["a"]))


async def test_a_stdio_connection_makes_no_http_client() -> None:
    async with McpClientPool() as pool:
        async with await connect_mcp("notes", "", command=NOTES, pool=pool) as connection:
            assert not (await connection.call_tool("read_page", {"page_id": "p1"})).is_error
        assert not pool.has_transport  # made on first HTTP use only; a stdio server has none
