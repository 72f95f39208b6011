"""What a hostile or oversized tool listing costs, with the mount's ``ListingLimits`` against
the naive approach (every listed tool bridged and offered), measured in the same run.

Servers (low-level ``Server``\\s on 127.0.0.1, the paginating kind ``MCPServer`` is not):

- ``many``: ``--tools`` tools (default 10,000) in pages of ``--page`` (default 100);
- ``endless``: a cursor that never ends and never repeats, 50 new tools per page;
- ``huge``: ten ordinary tools, one with a 5 MB input schema, one with a 2 MB description.

For each: the baseline connects, lists every tool (``list_tools()``, all pages, up to the
1000-page cap) and bridges them all; glove mounts the server with ``mount_mcp`` and the default
limits. Columns: wall time, pages read, tools offered, and the bytes of tool definitions (name,
description, input schema as JSON) the model would get with every call. The ratio is
baseline / glove.

Run: ``python bench/listing_limits.py [--tools 10000] [--page 100]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server

from glove_core import Glove, ScriptedModel, Tool
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, bridge_mcp_tool, connect_mcp, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.testing import build_paged_server, serve

_OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}}


def _endless(pages: list[str | None]) -> Server[Any]:
    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        pages.append(cursor)
        page = int(cursor or 0)
        tools = [types.Tool(name=f"t{page}_{i}", input_schema=_OBJECT) for i in range(50)]
        return types.ListToolsResult(tools=tools, next_cursor=str(page + 1))

    return Server("endless", on_list_tools=list_tools)


def _huge(pages: list[str | None]) -> Server[Any]:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "description": "y" * 5_000_000}},
    }
    tools = [
        types.Tool(name=f"plain_{i}", description="A tool.", input_schema=_OBJECT)
        for i in range(10)
    ]
    tools += [
        types.Tool(name="huge_schema", description="Big schema.", input_schema=schema),
        types.Tool(name="wordy", description="z" * 2_000_000, input_schema=_OBJECT),
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        pages.append(None)
        return types.ListToolsResult(tools=tools)

    return Server("huge", on_list_tools=list_tools)


def _bytes(tools: Sequence[Tool]) -> int:
    return sum(
        len(t.name) + len(t.description.encode()) + len(json.dumps(t.json_schema).encode())
        for t in tools
    )


async def _baseline(url: str, pages: list[str | None]) -> tuple[float, int, int, int]:
    pages.clear()
    start = time.perf_counter()
    async with await connect_mcp("srv", url) as conn:
        tools = [bridge_mcp_tool(conn, t, True) for t in await conn.list_tools()]
    return time.perf_counter() - start, len(pages), len(tools), _bytes(tools)


async def _glove(url: str, pages: list[str | None]) -> tuple[float, int, int, int]:
    pages.clear()
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="bench", server_mode=True)
    entry = McpCatalogueEntry(id="srv", name="Srv", description="d", url=url)
    start = time.perf_counter()
    async with await mount_mcp(glove, MemoryMcpAdapter("c", active=["srv"]), [entry]):
        tools = [t for t in glove.tools if t.name != FIND_CAPABILITY]
    return time.perf_counter() - start, len(pages), len(tools), _bytes(tools)


async def _run(args: argparse.Namespace) -> list[tuple[str, Any, Any]]:
    rows = []
    many_pages: list[str | None] = []
    endless_pages: list[str | None] = []
    huge_pages: list[str | None] = []
    servers = [
        (
            f"many ({args.tools:,} tools)",
            build_paged_server(args.tools, args.page, cursors=many_pages),
            many_pages,
        ),
        ("endless cursor", _endless(endless_pages), endless_pages),
        ("5 MB schema, 2 MB description", _huge(huge_pages), huge_pages),
    ]
    for label, server, pages in servers:
        async with serve(server) as url:
            baseline = await _baseline(url, pages)
            glove = await _glove(url, pages)
        rows.append((label, baseline, glove))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--page", type=int, default=100)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the limits' warnings are the point, not news
    rows = asyncio.run(_run(args))
    print(f"{'server':<32} {'':<9} {'seconds':>9} {'pages':>6} {'tools':>7} {'def. bytes':>12}")
    worst = 0.0
    for label, baseline, glove in rows:
        for who, (secs, pages, tools, size) in (("baseline", baseline), ("glove", glove)):
            print(f"{label:<32} {who:<9} {secs:>9.2f} {pages:>6} {tools:>7,} {size:>12,}")
        ratio = baseline[3] / glove[3]
        worst = max(worst, glove[3])
        print(
            f"{'':<32} {'ratio':<9} {baseline[0] / glove[0]:>8.1f}x {'':>6} {'':>7} {ratio:>11.1f}x"
        )
    print(
        f"summary: with the default limits no server offered more than {worst:,} bytes "
        "of tool definitions"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
