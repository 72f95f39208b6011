"""Issue 16, item 1: huge results were stored in full. The 100k-character cap only shortened
what the model saw; the whole result stayed in ``render_data``, was saved, and was read back on
every later request; a JSON-RPC error's message bypassed the cap altogether; and the transport
read any body whole. Now the bridge bounds text, errors and ``render_data``, the tool runner
bounds any tool's result, and the HTTP transport stops reading past ``max_message_bytes``.

Attacks are run at a few MB against the sizes test server on loopback, through a mounted Glove
with a real SQLite store; the big figures are in ``bench/large_results.py``."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from glove_core import (
    Glove,
    ResultLimits,
    ScriptedModel,
    SqliteStore,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultData,
)
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, connect_mcp, mount_mcp
from glove_mcp.errors import McpResponseTooLargeError
from glove_mcp.testing import McpTestServer

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

MB = 1_000_000


@pytest.fixture(params=[False, True], ids=["sse", "json"])
async def sizes_url(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    async with McpTestServer("sizes", json_response=request.param) as server:
        yield server.url


async def _call(
    url: str,
    db: Path,
    calls: list[tuple[str, dict[str, Any]]],
    **mount_options: Any,
) -> list[ToolResult]:
    """Mount the sizes server on a Glove with a SQLite store and let the model make ``calls``,
    one request each; the results as they were saved."""
    model = ScriptedModel([])
    for n, (name, args) in enumerate(calls):
        model.extend([[ToolCall(id=f"c{n}", name=f"sizes__{name}", input=args)], "ok"])
    store = SqliteStore(db, "conv")
    glove = Glove(model=model, system_prompt="test", store=store, server_mode=True)
    entry = McpCatalogueEntry(id="sizes", name="Sizes", description="Large answers.", url=url)
    adapter = MemoryMcpAdapter("conv", active=["sizes"])
    async with await mount_mcp(glove, adapter, [entry], **mount_options):
        glove.build()
        for _ in calls:
            await glove.process_request("go")
    return [r for m in await store.get_messages() for r in m.tool_results or []]


def _kept(result: ToolResult) -> int:
    """Characters the saved result holds, all fields together."""
    return len(result.model_dump_json())


async def test_a_huge_text_result_is_cut_everywhere_not_only_for_the_model(
    sizes_url: str, tmp_path: Path
) -> None:
    db = tmp_path / "conv.db"
    [big, small] = await _call(
        sizes_url, db, [("text", {"chars": 3 * MB}), ("echo", {"text": "still here"})]
    )
    assert big.result.status == "success"
    assert len(big.result.data) < 101_000
    assert re.search(r"showing 100,000 of 3,000,000 characters \(2,900,000 cut\)", big.result.data)
    # render_data (what the UI gets, and what is saved) is the bounded content too.
    [block] = big.result.render_data
    assert len(block["text"]) < 101_000 and "2,900,000 cut" in block["text"]
    assert _kept(big) < 250_000
    assert db.stat().st_size < MB  # 3 MB in, well under 1 MB stored
    assert small.result.data == "still here"


async def test_a_smaller_max_result_chars_bounds_results_and_render_data(
    sizes_url: str, tmp_path: Path
) -> None:
    [big] = await _call(
        sizes_url, tmp_path / "c.db", [("text", {"chars": 50_000})], max_result_chars=1_000
    )
    assert big.result.data.startswith("0123456789")
    assert "showing 1,000 of 50,000 characters" in big.result.data
    assert _kept(big) < 4_000


async def test_an_is_error_result_is_cut_and_so_is_its_render_data(
    sizes_url: str, tmp_path: Path
) -> None:
    [failed] = await _call(sizes_url, tmp_path / "c.db", [("failing", {"chars": 2 * MB})])
    assert failed.result.status == "error"
    assert failed.result.message is not None
    assert "tool 'failing' of MCP server 'sizes' failed" in failed.result.message
    assert "cut" in failed.result.message and len(failed.result.message) < 101_000
    assert _kept(failed) < 250_000


async def test_a_huge_json_rpc_error_message_is_cut(sizes_url: str, tmp_path: Path) -> None:
    [failed] = await _call(sizes_url, tmp_path / "c.db", [("rpc_error", {"chars": 3 * MB})])
    assert failed.result.status == "error"
    assert failed.result.message is not None
    assert "MCP server 'sizes' answered tools/call 'rpc_error' with error" in failed.result.message
    assert "more characters not shown" in failed.result.message
    assert _kept(failed) < 5_000


async def test_the_transport_stops_reading_past_max_message_bytes_and_the_session_lives_on(
    sizes_url: str, tmp_path: Path
) -> None:
    [refused, after] = await _call(
        sizes_url,
        tmp_path / "c.db",
        [("text", {"chars": 3 * MB}), ("echo", {"text": "next call works"})],
        max_message_bytes=1024 * 1024,
    )
    assert refused.result.status == "error"
    assert refused.result.message is not None
    assert "MCP server 'sizes'" in refused.result.message
    assert "larger than 1,048,576 bytes (max_message_bytes)" in refused.result.message
    assert _kept(refused) < 2_000
    assert after.result.status == "success" and after.result.data == "next call works"


async def test_a_connection_raises_a_typed_error_naming_the_limit(sizes_url: str) -> None:
    async with await connect_mcp("sizes", sizes_url, max_message_bytes=100_000) as conn:
        with pytest.raises(McpResponseTooLargeError, match=r"'sizes'.*100,000 bytes") as caught:
            await conn.call_tool("text", {"chars": 200_000})
        assert caught.value.limit == 100_000
        assert (await conn.call_tool("echo", {"text": "ok"})).text == "ok"
        assert conn.reconnects == 0


async def test_an_sse_stream_is_bounded_per_event_not_in_total(tmp_path: Path) -> None:
    # 40 progress events of 50 kB each: 2 MB in one response, every event under the bound.
    async with McpTestServer("sizes") as server:
        [chatty] = await _call(
            server.url,
            tmp_path / "c.db",
            [("chatty", {"events": 40, "chars": 50_000})],
            max_message_bytes=1024 * 1024,
        )
    assert chatty.result.status == "success" and chatty.result.data == "done"


@pytest.mark.parametrize("bad", [0, 100, "8MB"])
async def test_a_bad_max_message_bytes_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_message_bytes must be"):
        await connect_mcp("sizes", "http://127.0.0.1:9/mcp", max_message_bytes=bad)


@pytest.mark.parametrize("bad", [0, -5, 2.5])
async def test_a_bad_max_result_chars_is_refused(bad: Any) -> None:
    glove = Glove(model=ScriptedModel([]), system_prompt="s")
    with pytest.raises(ValueError, match="max_result_chars must be"):
        await mount_mcp(glove, MemoryMcpAdapter("c"), [], max_result_chars=bad)


# -- any tool: the last-line bound in the tool runner ------------------------------------------


def _huge(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
    return ToolResultData(
        status="error",
        data={"rows": ["r" * 1000] * 3000},
        message="m" * 3 * MB,
        render_data={"html": "h" * 3 * MB},
    )


async def test_any_tool_is_bounded_before_it_is_saved(tmp_path: Path) -> None:
    db = tmp_path / "conv.db"
    store = SqliteStore(db, "conv")
    model = ScriptedModel([[ToolCall(id="c1", name="huge", input={})], "ok"])
    glove = Glove(
        model=model,
        system_prompt="test",
        store=store,
        result_limits=ResultLimits(max_text_chars=10_000, max_render_chars=20_000),
    )
    glove.fold(Tool(name="huge", description="Huge.", do=_huge)).build()
    await glove.process_request("go")
    [saved] = [r for m in await store.get_messages() for r in m.tool_results or []]
    assert isinstance(saved.result.data, str) and saved.result.data.startswith('{"rows": ["rrr')
    assert "showing 10,000 of" in saved.result.data
    assert saved.result.message is not None and "message cut" in saved.result.message
    assert "max_render_chars" in saved.result.render_data["omitted"]
    assert db.stat().st_size < 200_000
    # The model was sent the bounded result too.
    [sent] = [r for m in model.requests[-1].messages for r in m.tool_results or []]
    assert sent.result.message == saved.result.message


async def test_the_default_limits_bound_a_custom_tool(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "conv.db", "conv")

    def giant(input: dict[str, Any], ctx: ToolContext) -> str:
        return "g" * 5 * MB

    model = ScriptedModel([[ToolCall(id="c1", name="giant", input={})], "ok"])
    glove = Glove(model=model, system_prompt="test", store=store)
    glove.fold(Tool(name="giant", description="Giant.", do=giant)).build()
    await glove.process_request("go")
    [saved] = [r for m in await store.get_messages() for r in m.tool_results or []]
    assert len(saved.result.data) < 1_001_000
    assert "showing 1,000,000 of 5,000,000 characters" in saved.result.data


@pytest.mark.parametrize(
    "field", ["max_text_chars", "max_render_chars", "max_media_bytes", "max_media_parts"]
)
def test_result_limits_are_validated(field: str) -> None:
    with pytest.raises(ValueError, match=f"ResultLimits.{field} must be"):
        ResultLimits(**{field: 0})


async def test_a_stdio_server_is_bounded_by_the_bridge(tmp_path: Path) -> None:
    # Over stdio the SDK reads each message whole (the server is a process of the user's own);
    # what is kept is still bounded.
    command = [sys.executable, "-m", "glove_mcp.testing", "sizes", "--stdio"]
    model = ScriptedModel([[ToolCall(id="c1", name="local__text", input={"chars": 3 * MB})], "ok"])
    store = SqliteStore(tmp_path / "c.db", "conv")
    glove = Glove(model=model, system_prompt="test", store=store, server_mode=True)
    entry = McpCatalogueEntry(id="local", name="Local", description="Sizes.", command=command)
    async with await mount_mcp(glove, MemoryMcpAdapter("conv", active=["local"]), [entry]):
        await glove.build().process_request("go")
    [saved] = [r for m in await store.get_messages() for r in m.tool_results or []]
    assert "2,900,000 cut" in saved.result.data
    assert _kept(saved) < 250_000
