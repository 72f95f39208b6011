"""A ``tools/list_changed`` storm is coalesced: per server at most one re-listing in flight
and one pending, and the adapter saves the tools only when the listing differs."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from glove_core import Glove, ScriptedModel, ToolCall
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, SqliteMcpAdapter, mount_mcp
from glove_mcp.mount._coalesce import Coalescer
from glove_mcp.subscribers import McpListChanged
from glove_mcp.testing import McpTestServer


def storm_server() -> MCPServer:
    server = MCPServer("storm", log_level="WARNING")

    @server.tool(description="Send count list changes.")
    async def storm(count: int, ctx: Context) -> str:
        for _ in range(count):
            await ctx.notify_tools_changed()
        return "sent"

    @server.tool(description="Add the tool extra, then send count list changes.")
    async def grow(count: int, ctx: Context) -> str:
        def extra(word: str) -> str:
            """Echo a word."""
            return word

        server.add_tool(extra)
        for _ in range(count):
            await ctx.notify_tools_changed()
        return "grown"

    return server


class Counting:
    """ASGI middleware counting ``tools/list`` requests."""

    def __init__(self, app: Any) -> None:
        self.app, self.lists = app, 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages = [await receive()]
        while messages[-1].get("more_body", False):
            messages.append(await receive())
        body = b"".join(m.get("body", b"") for m in messages)
        with contextlib.suppress(ValueError, AttributeError):
            self.lists += json.loads(body).get("method") == "tools/list"
        pending = iter(messages)

        async def replay() -> Any:
            return next(pending, None) or await receive()

        await self.app(scope, replay, send)


class SavingAdapter(SqliteMcpAdapter):
    def __init__(self, path: Path) -> None:
        super().__init__(path, "c")
        self.saves = 0

    async def save_learned_listing(self, server_id: str, tools: Any, **listing: Any) -> None:
        self.saves += 1
        await super().save_learned_listing(server_id, tools, **listing)


async def test_a_storm_of_list_changes_costs_two_listings_and_no_save(tmp_path: Path) -> None:
    counting = Counting(storm_server().streamable_http_app(streamable_http_path="/mcp"))
    recorder = RecordingSubscriber()
    async with McpTestServer(lambda: counting) as server:
        entry = McpCatalogueEntry(id="storm", name="Storm", description="s", url=server.url)
        adapter = SavingAdapter(tmp_path / "a.db")
        await adapter.activate("storm")
        model = ScriptedModel(
            [
                [ToolCall(id="c1", name="storm__storm", input={"count": 200})],
                [ToolCall(id="c2", name="storm__grow", input={"count": 200})],
                "done",
            ]
        )
        glove = Glove(model=model, system_prompt="s", server_mode=True)
        glove.add_subscriber(recorder)
        async with await mount_mcp(glove, adapter, [entry]):
            lists, saves = counting.lists, adapter.saves
            await glove.build().process_request("storm")
            [changed] = await recorder.wait_for(McpListChanged)
        await adapter.aclose()
    assert changed.added == ("storm__extra",)
    # 400 notifications (one listing each before coalescing): the first re-listing, one
    # pending after each burst; the one that found extra was the only save.
    assert counting.lists - lists <= 5
    assert adapter.saves - saves == 1  # only the listing that differed was saved


async def test_the_coalescer_runs_once_more_for_any_number_of_requests() -> None:
    import asyncio

    coalescer = Coalescer(quiet=0.01)
    started = asyncio.Event()
    release = asyncio.Event()
    runs = 0

    async def work() -> None:
        nonlocal runs
        runs += 1
        started.set()
        await release.wait()

    first = asyncio.create_task(coalescer.run("k", work))
    await started.wait()
    for _ in range(100):
        await coalescer.run("k", work)  # returns at once: marked pending
    release.set()
    await first
    assert runs == 2
    await coalescer.run("k", work)  # nothing in flight: runs at once
    assert runs == 3
