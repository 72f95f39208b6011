"""What a mount keeps when it lists a server: its tools, its instructions and the listing's TTL
(``ttlMs``), in a real SQLite file, from a real server on loopback."""

from __future__ import annotations

from pathlib import Path

from mcp.server.caching import CacheHint

from glove_core import Glove, ScriptedModel
from glove_mcp import McpCatalogueEntry, SqliteMcpAdapter, mount_mcp
from glove_mcp.testing import McpTestServer, serve
from glove_mcp.testing.servers import build_notes_server

SAID = "Pages of the fleet handbook: search before you read."


async def test_a_mount_keeps_the_servers_instructions_and_ttl(tmp_path: Path) -> None:
    hints = {"tools/list": CacheHint(ttl_ms=90_000, scope="private")}
    server = build_notes_server(instructions=SAID, cache_hints=hints)
    async with McpTestServer(server) as fleet, serve("tracker") as tracker:
        entries = [
            McpCatalogueEntry(id="fleet", name="Fleet", description="Pages.", url=fleet.url),
            McpCatalogueEntry(id="tracker", name="Tracker", description="Issues.", url=tracker),
        ]
        glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
        async with (
            SqliteMcpAdapter(tmp_path / "chat.db", "conv") as adapter,
            await mount_mcp(glove, adapter, entries) as mount,
        ):
            await mount.activate("fleet")
            await mount.activate("tracker")
            kept = await adapter.get_learned_listings()
            tools = await adapter.get_learned_tools()
    assert (kept["fleet"].instructions, kept["fleet"].ttl_ms) == (SAID, 90_000)
    assert kept["fleet"].is_fresh()
    assert "search_pages" in [t.name for t in tools["fleet"]]
    # No instructions and no TTL from the tracker: kept as such (listed again by the index).
    assert (kept["tracker"].instructions, kept["tracker"].ttl_ms) == ("", None)
