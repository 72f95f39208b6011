"""MCP adapters: active ids per conversation in memory and in a real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glove_core import Glove, ScriptedModel
from glove_mcp import McpAdapter, McpCatalogueEntry, MemoryMcpAdapter, SqliteMcpAdapter, mount_mcp
from glove_mcp.adapter import (
    MAX_LEARNED_INSTRUCTIONS,
    MAX_LEARNED_TTL_MS,
    LearnedListing,
    LearnedListingsStore,
    LearnedTool,
    LearnedToolsStore,
)
from glove_mcp.errors import McpStateError
from glove_mcp.testing import serve
from tests._backends import Backend


async def test_memory_adapter_keeps_order_and_is_idempotent() -> None:
    adapter = MemoryMcpAdapter("conv", active=["a", "b"])
    await adapter.activate("c")
    await adapter.activate("a")
    await adapter.deactivate("b")
    await adapter.deactivate("zzz")
    assert await adapter.get_active() == ["a", "c"]
    assert isinstance(adapter, McpAdapter)
    assert await adapter.get_access_token("a") is None


async def test_memory_adapter_tokens_from_map_or_function() -> None:
    mapped = MemoryMcpAdapter("c", tokens={"notes": "t1"})
    assert await mapped.get_access_token("notes") == "t1"
    assert await mapped.get_access_token("other") is None

    async def lookup(id: str) -> str:
        return f"token-for-{id}"

    assert await MemoryMcpAdapter("c", tokens=lookup).get_access_token("x") == "token-for-x"
    assert await MemoryMcpAdapter("c", tokens=str.upper).get_access_token("x") == "X"


async def test_sqlite_adapter_persists_per_conversation(backend: Backend) -> None:
    one, two = await backend.adapter("c1"), await backend.adapter("c2")
    await one.activate("notes")
    await one.activate("tracker")
    await one.activate("notes")
    await two.activate("tracker")
    await one.deactivate("tracker")
    await one.activate("wiki")
    await one.activate("notes")
    assert isinstance(one, McpAdapter)
    reopened = await backend.adapter("c1", fresh=True)
    assert await reopened.get_active() == ["notes", "wiki"]
    assert reopened.identifier == "c1"
    other = await backend.adapter("c2", tokens={"tracker": "t2"}, fresh=True)
    assert await other.get_active() == ["tracker"]
    assert await other.get_access_token("tracker") == "t2"
    if backend.kind == "sqlite":
        with sqlite3.connect(backend.where) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_learned_tools_are_kept_per_server_for_every_conversation(
    backend: Backend,
) -> None:
    one = await backend.adapter("c1")
    assert isinstance(one, LearnedToolsStore)
    assert await one.get_learned_tools() == {}
    tools = [LearnedTool("search_pages", "Search."), LearnedTool("read_page", "Read.")]
    await one.save_learned_tools("notes", [*tools, LearnedTool("search_pages", "again")])
    await one.save_learned_tools("tracker", [LearnedTool("list_issues", "d" * 900)])
    # Another conversation, on a connection of its own (a restart), sees what c1 learned.
    other = await backend.adapter("c2", fresh=True)
    kept = await other.get_learned_tools()
    assert kept["notes"] == tools  # in listing order, a repeated name kept once
    assert len(kept["tracker"][0].description) == 500  # cut, as the contract says
    await other.save_learned_tools("notes", [LearnedTool("search", "")])  # replaces the list
    assert (await one.get_learned_tools())["notes"] == [LearnedTool("search", "")]
    with pytest.raises(TypeError, match="must be LearnedTool objects"):
        await one.save_learned_tools("notes", ["search"])  # type: ignore[list-item]
    assert (await one.get_learned_tools())["notes"] == [LearnedTool("search", "")]


def learned_at(backend: Backend, server_id: str) -> list[str]:
    """The rows' ``learned_at`` stamps, read straight from the database."""
    query = "SELECT learned_at FROM glove_mcp_learned_tools WHERE server_id = {} ORDER BY position"
    if backend.kind == "sqlite":
        with sqlite3.connect(backend.where) as conn:
            return [r[0] for r in conn.execute(query.format("?"), (server_id,))]
    import psycopg

    with psycopg.connect(backend.where) as pg:
        return [str(r[0]) for r in pg.execute(query.format("%s"), (server_id,))]


async def test_an_unchanged_listing_is_read_not_written_again(backend: Backend) -> None:
    adapter = await backend.adapter("c1")
    tools = [LearnedTool("search_pages", "Search."), LearnedTool("read_page", "Read.")]
    await adapter.save_learned_tools("notes", tools)
    first = learned_at(backend, "notes")
    await asyncio.sleep(0.01)  # a rewrite would stamp a later time
    await (await backend.adapter("c2", fresh=True)).save_learned_tools("notes", list(tools))
    assert learned_at(backend, "notes") == first
    changed = [LearnedTool("search_pages", "Search pages and blocks."), tools[1]]
    await adapter.save_learned_tools("notes", changed)
    assert learned_at(backend, "notes") != first
    assert (await adapter.get_learned_tools())["notes"] == changed


async def check_listings(make: Any) -> None:
    """What every ``LearnedListingsStore`` of glove_mcp keeps; ``make(id)`` opens an adapter
    (another connection each time, where the store has connections)."""
    one = await make("c1")
    assert isinstance(one, LearnedListingsStore)
    assert await one.get_learned_listings() == {}
    tools = [LearnedTool("search_pages", "Search.")]
    said = "  Use search_pages before read_page. " + "x" * 3000
    before = datetime.now(UTC)
    await one.save_learned_listing("notes", tools, instructions=said, ttl_ms=60_000)
    await one.save_learned_listing("tracker", [LearnedTool("list_issues")], ttl_ms=0)
    await one.save_learned_listing("week", [], instructions="Weekly.", ttl_ms=10**12)
    other = await make("c2")
    kept = await other.get_learned_listings()
    assert (await other.get_learned_tools())["notes"] == tools
    notes = kept["notes"]
    assert notes.instructions == said.strip()[:MAX_LEARNED_INSTRUCTIONS]
    assert notes.ttl_ms == 60_000
    assert before <= notes.listed_at <= datetime.now(UTC)
    assert notes.is_fresh() and notes.fresh_until() == notes.listed_at + timedelta(minutes=1)
    assert not notes.is_fresh(notes.listed_at + timedelta(minutes=1))
    # ttlMs 0 (or none): the listing may not be kept as fresh; a year is cut to a day.
    assert kept["tracker"] == LearnedListing("", kept["tracker"].listed_at, None)
    assert not kept["tracker"].is_fresh()
    assert kept["week"].ttl_ms == MAX_LEARNED_TTL_MS
    # The same listing again, still fresh: nothing is written (the time stays).
    await other.save_learned_listing("notes", tools, instructions=said, ttl_ms=60_000)
    assert (await one.get_learned_listings())["notes"].listed_at == notes.listed_at
    # Tools saved without a listing leave the listing as it was.
    await other.save_learned_tools("notes", [LearnedTool("read_page")])
    assert (await one.get_learned_listings())["notes"] == notes
    # New instructions replace the old ones, with a new time.
    await one.save_learned_listing("notes", tools, instructions="Pages.", ttl_ms=60_000)
    changed = (await other.get_learned_listings())["notes"]
    assert changed.instructions == "Pages." and changed.listed_at >= notes.listed_at
    assert (await other.get_learned_tools())["notes"] == tools


async def check_bad_listings_are_refused(adapter: Any) -> None:
    await adapter.save_learned_listing("notes", [LearnedTool("a")], instructions="Kept.")
    kept = await adapter.get_learned_listings()
    bad: list[tuple[type[Exception], str, dict[str, Any]]] = [
        (TypeError, "instructions must be a str or None, got int", {"instructions": 5}),
        (TypeError, "ttl_ms must be an int of milliseconds or None, got True", {"ttl_ms": True}),
        (TypeError, "ttl_ms must be an int of milliseconds or None, got '10'", {"ttl_ms": "10"}),
        (ValueError, "ttl_ms must be 0 or more milliseconds, got -1", {"ttl_ms": -1}),
    ]
    for error, message, options in bad:
        with pytest.raises(error, match=message):
            await adapter.save_learned_listing("notes", [LearnedTool("b")], **options)
    with pytest.raises(TypeError, match="must be LearnedTool objects"):
        await adapter.save_learned_listing("notes", ["b"], instructions="Lost.")
    assert await adapter.get_learned_listings() == kept  # nothing lost, nothing half-written
    assert (await adapter.get_learned_tools())["notes"] == [LearnedTool("a")]


async def test_listings_keep_instructions_time_and_ttl(backend: Backend) -> None:
    await check_listings(lambda id: backend.adapter(id, fresh=True))
    await check_bad_listings_are_refused(await backend.adapter("c3"))


async def test_the_memory_adapter_keeps_listings_too() -> None:
    memory = MemoryMcpAdapter("c")

    async def same(id: str) -> MemoryMcpAdapter:
        return memory  # one process: every conversation shares the same memory

    await check_listings(same)
    await check_bad_listings_are_refused(MemoryMcpAdapter("c"))


async def test_an_expired_listing_is_written_again(backend: Backend) -> None:
    adapter = await backend.adapter("c1")
    tools = [LearnedTool("search_pages", "Search.")]
    await adapter.save_learned_listing("notes", tools, instructions="Pages.", ttl_ms=1)
    first = (await adapter.get_learned_listings())["notes"]
    await asyncio.sleep(0.01)  # past its 1 ms
    assert not first.is_fresh()
    await adapter.save_learned_listing("notes", tools, instructions="Pages.", ttl_ms=1)
    assert (await adapter.get_learned_listings())["notes"].listed_at > first.listed_at


async def test_sqlite_adapter_shares_a_file_with_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE conversation_messages (id TEXT)")
        conn.execute("INSERT INTO conversation_messages VALUES ('m1')")
    async with SqliteMcpAdapter(path, "c") as adapter:
        await adapter.activate("notes")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT id FROM conversation_messages").fetchall() == [("m1",)]


async def test_sqlite_adapter_concurrent_writers(backend: Backend) -> None:
    adapters = [await backend.adapter(f"c{i}", fresh=True) for i in range(4)]
    await asyncio.gather(*(a.activate(f"s{j}") for a in adapters for j in range(5)))
    for adapter in adapters:
        assert sorted(await adapter.get_active()) == [f"s{j}" for j in range(5)]


async def test_sqlite_adapter_after_close(tmp_path: Path) -> None:
    adapter = SqliteMcpAdapter(tmp_path / "x.sqlite", "c")
    await adapter.activate("a")
    await adapter.aclose()
    await adapter.aclose()
    with pytest.raises(McpStateError, match="'c' is closed"):
        await adapter.get_active()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "b", "c", "d"])), max_size=12))
def test_sqlite_adapter_matches_memory_adapter(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[bool, str]]
) -> None:
    async def run() -> tuple[list[str], list[str]]:
        path = tmp_path_factory.mktemp("prop") / "a.sqlite"
        memory = MemoryMcpAdapter("c")
        async with SqliteMcpAdapter(path, "c") as stored:
            for add, id in ops:
                for adapter in (memory, stored):
                    await (adapter.activate(id) if add else adapter.deactivate(id))
            return await memory.get_active(), await stored.get_active()

    in_memory, on_disk = asyncio.run(run())
    assert sorted(in_memory) == sorted(on_disk)


async def test_mount_reloads_what_a_previous_process_activated(tmp_path: Path) -> None:
    path = tmp_path / "conv.sqlite"
    async with serve("notes") as url:
        entries = [McpCatalogueEntry(id="notes", name="Notes", description="pages", url=url)]
        async with SqliteMcpAdapter(path, "conv") as adapter:
            glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
            async with await mount_mcp(glove, adapter=adapter, entries=entries) as mount:
                await mount.activate("notes")
        # "Restart": a new adapter and Glove on the same file.
        async with SqliteMcpAdapter(path, "conv") as adapter:
            glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
            async with await mount_mcp(glove, adapter=adapter, entries=entries) as mount:
                assert mount.loaded == ["notes"]
                assert "notes__read_page" in {t.name for t in glove.tools}


async def test_adapter_token_source_is_asked_for_a_fresh_token_after_a_401() -> None:
    from glove_mcp import adapter_auth, connect_mcp
    from glove_mcp.testing import ServerControl, serve

    class Rotating:
        def __init__(self) -> None:
            self.forced = 0

        async def access_token(self, *, force_refresh: bool = False) -> str | None:
            if force_refresh:
                self.forced += 1
                return "fresh"
            return "stale"

    source = Rotating()
    adapter = MemoryMcpAdapter("conv", tokens={"notes": source})
    control = ServerControl(tokens={"fresh"})
    async with (
        serve("notes", control=control) as url,
        await connect_mcp("notes", url, auth=adapter_auth(adapter, "notes")) as connection,
    ):
        assert [t.name for t in await connection.list_tools()]
    assert source.forced >= 1
    assert await adapter.get_access_token("notes") == "stale"
    assert await adapter.get_access_token("notes", fresh=True) == "fresh"
    assert await adapter.get_access_token("other") is None


async def test_a_postgres_database_of_version_2_upgrades_and_keeps_its_learned_tools(
    postgres_url: str,
) -> None:
    from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema
    from glove_mcp.adapter_postgres import PostgresMcpAdapter

    # A database as the adapter made it before the servers' listings were kept: 1-2.
    name, steps = PostgresMcpAdapter.schema.name, PostgresMcpAdapter.schema.migrations
    old = await PostgresDatabase(postgres_url).open()

    async def write(conn: Connection) -> None:
        await conn.execute(
            "INSERT INTO glove_mcp_learned_tools VALUES "
            "('notes', 0, 'search_pages', 'Search.', '2026-01-01')"
        )

    try:
        await old.migrate(PostgresSchema(name, steps[:2]))
        await old.write(write)
    finally:
        await old.aclose()
    database = await PostgresDatabase(postgres_url).open()

    async def version(conn: Connection) -> object:
        cursor = await conn.execute(
            "SELECT version FROM glove_store_schema WHERE component = %s", (name,)
        )
        row = await cursor.fetchone()
        return None if row is None else row[0]

    try:
        async with PostgresMcpAdapter(database, "conv") as adapter:
            assert await adapter.get_learned_tools() == {
                "notes": [LearnedTool("search_pages", "Search.")]
            }
            assert await adapter.get_learned_listings() == {}
            await adapter.save_learned_listing("notes", [], instructions="Pages.", ttl_ms=5)
            listing = (await adapter.get_learned_listings())["notes"]
        assert (listing.instructions, listing.ttl_ms) == ("Pages.", 5)
        assert await database.read(version) == 3
    finally:
        await database.aclose()
