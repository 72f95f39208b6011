"""A ``tools/list_changed`` storm: a server sends 400 notifications during one tool call.

Before coalescing each notification caused one full re-listing, re-bridging and (with the
SQLite/PostgreSQL adapters) a save: 400 notifications, 401 ``tools/list`` requests. Now a
mount runs at most one re-listing per server and keeps at most one more pending, and saves
only when the listing differs. The server counts the ``tools/list`` requests it answers; the
mount runs on a real ``SqliteMcpAdapter``, whose saves are counted too. The baseline of the
same run is the naive figure: one listing per notification.

Target: at most 3 listings for 400 notifications.

Run: python bench/list_changed_storm.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from glove_core import Glove, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, SqliteMcpAdapter, mount_mcp
from glove_mcp.testing import McpTestServer

NOTIFICATIONS = 400
TARGET = 3


def storm_server() -> MCPServer:
    server = MCPServer("storm", log_level="WARNING")

    @server.tool(description="Change the tool list many times.")
    async def storm(count: int, ctx: Context) -> str:
        for _ in range(count):
            # subscriptions/listen streams (the 2026-07-28 protocol glove negotiates here).
            await ctx.notify_tools_changed()
        return f"sent {count}"

    @server.tool(description="Read a page.")
    def read_page(id: str) -> str:
        return id

    return server


class Counting:
    """ASGI middleware counting JSON-RPC ``tools/list`` requests."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lists = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        try:
            if json.loads(body).get("method") == "tools/list":
                self.lists += 1
        except (ValueError, AttributeError):
            pass
        pending = iter(messages)

        async def replay() -> Any:
            return next(pending, None) or await receive()

        await self.app(scope, replay, send)


class CountingAdapter(SqliteMcpAdapter):
    saves = 0

    async def save_learned_listing(self, server_id: str, tools: Any, **listing: Any) -> None:
        CountingAdapter.saves += 1
        await super().save_learned_listing(server_id, tools, **listing)


async def run() -> tuple[int, int, float]:
    server = storm_server()
    counting = Counting(server.streamable_http_app(streamable_http_path="/mcp"))
    async with McpTestServer(lambda: counting) as running:
        entry = McpCatalogueEntry(id="storm", name="Storm", description="storms", url=running.url)
        call = ToolCall(id="c1", name="storm__storm", input={"count": NOTIFICATIONS})
        glove = Glove(model=ScriptedModel([[call], "done"]), system_prompt="s", server_mode=True)
        with tempfile.TemporaryDirectory() as folder:
            adapter = CountingAdapter(Path(folder) / "a.db", "c")
            await adapter.activate("storm")
            async with await mount_mcp(glove, adapter, [entry]):
                before_lists, before_saves = counting.lists, CountingAdapter.saves
                started = time.perf_counter()
                await glove.build().process_request("storm")
                # Wait until the re-listing settles: no new listing for half a second.
                seen = -1
                while seen != counting.lists:
                    seen = counting.lists
                    await asyncio.sleep(0.5)
                elapsed = time.perf_counter() - started - 0.5
            await adapter.aclose()
        return counting.lists - before_lists, CountingAdapter.saves - before_saves, elapsed


def main() -> int:
    listings, saves, elapsed = asyncio.run(run())
    print(f"{'':<28}{'tools/list':>12}{'saves':>8}{'seconds':>10}")
    print(f"{'naive (one per notification)':<28}{NOTIFICATIONS + 1:>12}{NOTIFICATIONS:>8}{'':>10}")
    print(f"{'glove (coalesced)':<28}{listings:>12}{saves:>8}{elapsed:>10.2f}")
    ok = listings <= TARGET
    print(
        f"summary: {NOTIFICATIONS} tools/list_changed notifications caused {listings} "
        f"re-listing(s) and {saves} save(s) (naive: {NOTIFICATIONS}); "
        f"{'meets' if ok else 'misses'} the <= {TARGET} target"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
