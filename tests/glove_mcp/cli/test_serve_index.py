"""``glove-mcp serve --index-tools MINUTES``: the catalogue's open and stdio servers' tools
listed in the background into the server's database (a real serve process, a real stdio
server), and the background task itself (started, listing, cancelled with its block)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from glove_mcp import McpCatalogueEntry, SqliteMcpAdapter
from glove_mcp.adapter import LearnedTool
from glove_mcp.cli.serve_index import background_index
from tests.glove_mcp.cli._commands import CLI, cli_env
from tests.glove_mcp.cli._support import STDIO, catalogue


async def learned(db: Path) -> dict[str, list[LearnedTool]]:
    async with SqliteMcpAdapter(db, "reader") as adapter:
        return await adapter.get_learned_tools()


async def wait_for_tools(db: Path, server_id: str, seconds: float = 60) -> list[LearnedTool]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await asyncio.to_thread(db.exists):
            found = (await learned(db)).get(server_id)
            if found:
                return found
        await asyncio.sleep(0.2)
    raise AssertionError(f"no tools of {server_id!r} in {db} after {seconds} s")


async def test_the_background_index_lists_tools_and_stops_with_its_block(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    entries = [
        McpCatalogueEntry(id="notes", name="Notes", description="n", command=list(STDIO)),
        McpCatalogueEntry(id="down", name="Down", description="d", url="http://127.0.0.1:9/mcp"),
    ]
    before = asyncio.all_tasks()
    async with background_index(1, entries, db):
        tools = await wait_for_tools(db, "notes")
        assert len(asyncio.all_tasks()) == len(before) + 1
    assert "search_pages" in [t.name for t in tools]
    assert asyncio.all_tasks() == before  # cancelled and awaited
    assert set(await learned(db)) == {"notes"}
    async with background_index(None, entries, tmp_path / "never.db"):
        assert asyncio.all_tasks() == before
    assert not (tmp_path / "never.db").exists()


async def test_serve_indexes_tools_in_the_background(tmp_path: Path) -> None:
    file = catalogue(tmp_path / "servers.toml", notes=STDIO)
    script = tmp_path / "script.json"
    script.write_text('{"replies": ["hi"]}', encoding="utf-8")
    db = tmp_path / "s.db"
    process = await asyncio.create_subprocess_exec(
        *CLI,
        "serve",
        "--port",
        "0",
        "--script",
        str(script),
        "--catalogue",
        str(file),
        "--db",
        str(db),
        "--index-tools",
        "5",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(tmp_path, GLOVE_API_KEY="k" * 32),
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        assert re.search(r"http://\S+", line), line
        tools = await wait_for_tools(db, "notes")
        assert "search_pages" in [t.name for t in tools]
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)
    assert process.returncode == 0  # SIGTERM: a clean stop
