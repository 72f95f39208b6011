"""SqliteMcpAdapter on glove_core's SQLite layer, alone and sharing one file with the
conversation store and the event queue."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from glove_core import Message, SqliteEventQueue, SqliteStore, Usage
from glove_core.errors import StoreCorruptError, StoreError, StoreVersionError
from glove_core.event_queue import OutsideEvent
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT, SqliteDatabase, SqliteSchema
from glove_mcp import SqliteMcpAdapter
from glove_mcp.adapter import LearnedTool
from tests.fixtures.legacy_sqlite import legacy_file


def event(id: str) -> OutsideEvent:
    return OutsideEvent(
        id=id, source="ci", kind="build", content=id, received_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def schema_rows(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT component, version FROM glove_store_schema ORDER BY component"
        ).fetchall()
    finally:
        conn.close()


async def test_three_components_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    async with (
        SqliteStore(path, "conv") as store,
        SqliteEventQueue(path, "conv") as queue,
        SqliteMcpAdapter(path, "conv") as adapter,
    ):

        async def converse(n: int) -> None:
            await store.append_messages([Message(sender="user", text=f"q{n}")])
            await store.add_usage(Usage(input_tokens=1))

        async def notify(n: int) -> None:
            assert await queue.add(event(f"e{n}"))

        async def switch(n: int) -> None:
            await adapter.activate(f"s{n}")

        await asyncio.gather(
            *(f(n) for n in range(20) for f in (converse, notify, switch))  # interleaved writers
        )
        # Concurrent writers: every message lands once (their order is the scheduler's).
        texts = [m.text for m in await store.get_messages()]
        assert sorted(texts) == sorted(f"q{n}" for n in range(20))
        assert (await store.get_usage()).input_tokens == 20
        assert len(await queue.pending()) == 20
        assert sorted(await adapter.get_active()) == sorted(f"s{n}" for n in range(20))

    assert schema_rows(path) == [
        (SqliteStore.schema.name, SqliteStore.schema.version),
        (SqliteEventQueue.schema.name, SqliteEventQueue.schema.version),
        (SqliteMcpAdapter.schema.name, SqliteMcpAdapter.schema.version),
    ]
    # Restarted, each finds its rows; the others' tables are not migrated again.
    async with SqliteMcpAdapter(path, "conv") as adapter, SqliteStore(path, "conv") as store:
        assert len(await adapter.get_active()) == 20
        assert len(await store.get_messages()) == 20


async def test_a_file_written_before_the_sqlite_layer_opens_for_all_three(
    tmp_path: Path,
) -> None:
    path = legacy_file(tmp_path, "all_components")
    async with SqliteMcpAdapter(path, "conv") as adapter:
        assert await adapter.get_active() == ["notes", "tracker"]
        await adapter.activate("calendar")
        assert await adapter.get_active() == ["notes", "tracker", "calendar"]
    async with SqliteEventQueue(path, "conv") as queue:
        assert [e.id for e in await queue.pending()] == ["e2"]
        assert not await queue.add(event("e1"))
    async with SqliteStore(path, "conv") as store:
        assert [m.id for m in await store.get_messages()] == ["m1", "m2"]
    assert schema_rows(path) == [
        ("glove_core.conversations", SqliteStore.schema.version),
        ("glove_core.events", 1),
        ("glove_mcp.active_servers", 3),  # 2: the learned tools; 3: the servers' listings
    ]


async def test_an_adapter_file_written_before_the_sqlite_layer_opens(tmp_path: Path) -> None:
    path = legacy_file(tmp_path, "mcp_only")
    async with SqliteMcpAdapter(path, "conv") as adapter:
        assert await adapter.get_active() == ["notes"]
    assert schema_rows(path) == [("glove_mcp.active_servers", 3)]


async def test_a_newer_adapter_table_is_refused_untouched_and_the_store_still_opens(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.db"
    async with SqliteStore(path, "conv") as store, SqliteMcpAdapter(path, "conv") as adapter:
        await store.append_messages([Message(sender="user", text="hi")])
        await adapter.activate("notes")
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE glove_store_schema SET version = 9 WHERE component = 'glove_mcp.active_servers'"
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = path.read_bytes()

    newer = SqliteMcpAdapter(path, "conv")
    with pytest.raises(StoreVersionError, match="schema version 9") as info:
        await newer.get_active()
    assert any("glove_mcp.active_servers" in note for note in info.value.__notes__)
    await newer.aclose()
    assert path.read_bytes() == before
    async with SqliteStore(path, "conv") as store:
        assert [m.text for m in await store.get_messages()] == ["hi"]


async def test_a_file_that_is_not_a_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database\n" * 100)
    adapter = SqliteMcpAdapter(path, "conv")
    with pytest.raises(StoreCorruptError, match=r"notes\.txt"):
        await adapter.activate("notes")
    await adapter.aclose()
    assert path.read_bytes() == b"not a database\n" * 100
    assert names_in(tmp_path) == ["notes.txt"]


async def test_the_busy_timeout_is_the_same_for_all_three(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    components: list[SqliteStore | SqliteEventQueue | SqliteMcpAdapter] = [
        SqliteStore(path, "conv"),
        SqliteEventQueue(path, "conv"),
        SqliteMcpAdapter(path, "conv"),
    ]
    assert {c.busy_timeout for c in components} == {SQLITE_BUSY_TIMEOUT}
    for component in components:
        await component.aclose()

    # Each passes its busy_timeout to the layer's connection: with 0, a held lock fails at once.
    async with (
        SqliteStore(path, "conv", busy_timeout=0) as store,
        SqliteEventQueue(path, "conv", busy_timeout=0) as queue,
        SqliteMcpAdapter(path, "conv", busy_timeout=0) as adapter,
    ):
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match="stayed locked"):
                await store.append_messages([Message(sender="user", text="x")])
            with pytest.raises(StoreError, match="stayed locked"):
                await queue.add(event("a"))
            with pytest.raises(StoreError, match="stayed locked"):
                await adapter.activate("notes")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        await adapter.activate("notes")
        assert await adapter.get_active() == ["notes"]


async def test_a_file_of_version_2_upgrades_and_keeps_its_learned_tools(tmp_path: Path) -> None:
    # A file as the adapter wrote it before the servers' listings were kept: migrations 1-2.
    path = tmp_path / "chat.db"
    two = SqliteMcpAdapter.schema.migrations[:2]
    old = SqliteDatabase(path, SqliteSchema(SqliteMcpAdapter.schema.name, two))
    await old.open()

    def write(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO glove_mcp_active VALUES ('conv', 'notes', '2026-01-01', 1)")
        conn.executemany(
            "INSERT INTO glove_mcp_learned_tools VALUES ('notes', ?, ?, ?, '2026-01-01')",
            [(0, "search_pages", "Search pages."), (1, "read_page", "Read a page.")],
        )

    await old.write(write)
    await old.aclose()
    assert schema_rows(path) == [("glove_mcp.active_servers", 2)]
    async with SqliteMcpAdapter(path, "conv") as adapter:
        assert await adapter.get_active() == ["notes"]
        assert (await adapter.get_learned_tools())["notes"] == [
            LearnedTool("search_pages", "Search pages."),
            LearnedTool("read_page", "Read a page."),
        ]
        assert await adapter.get_learned_listings() == {}
        await adapter.save_learned_listing(
            "notes", [LearnedTool("search_pages")], instructions="Pages.", ttl_ms=5000
        )
    assert schema_rows(path) == [("glove_mcp.active_servers", 3)]
    async with SqliteMcpAdapter(path, "other") as adapter:
        listing = (await adapter.get_learned_listings())["notes"]
        assert (listing.instructions, listing.ttl_ms) == ("Pages.", 5000)
