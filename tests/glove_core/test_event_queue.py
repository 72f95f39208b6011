"""SqliteEventQueue on real files: the SQLite layer's migrations, refusals and busy timeout.

Tests taking ``backend`` also run on PostgreSQL (``PostgresEventQueue``)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from glove_core import SqliteEventQueue
from glove_core.errors import GloveStateError, StoreCorruptError, StoreError, StoreVersionError
from glove_core.event_queue import OutsideEvent
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT
from tests._backends import Backend
from tests.fixtures.legacy_sqlite import legacy_file


def event(id: str) -> OutsideEvent:
    return OutsideEvent(
        id=id, source="ci", kind="build", content=id, received_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


async def test_events_round_trip_in_order_and_duplicates_are_refused(backend: Backend) -> None:
    queue = await backend.queue("conv")
    other = await backend.queue("other")
    assert await queue.add(event("a"))
    assert await queue.add(event("b"))
    assert not await queue.add(event("a"))
    assert await other.add(event("a"))  # ids are per conversation
    assert [e.id for e in await queue.pending()] == ["a", "b"]
    assert await queue.pending_size() == (2, sum(len(event(i).model_dump_json()) for i in "ab"))
    await queue.mark(["a"], "injected")
    await queue.mark([], "dropped")
    assert [e.id for e in await queue.pending()] == ["b"]
    again = await backend.queue("conv", fresh=True)
    assert [e.id for e in await again.pending()] == ["b"]
    assert not await again.add(event("a"))  # remembered across a restart


async def test_a_queue_file_written_before_the_sqlite_layer_opens_and_is_migrated(
    tmp_path: Path,
) -> None:
    path = legacy_file(tmp_path, "events_only")
    async with SqliteEventQueue(path, "conv") as queue:
        assert [e.id for e in await queue.pending()] == ["e1"]
        assert not await queue.add(event("e1"))
        assert await queue.add(event("e2"))
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT component, version FROM glove_store_schema").fetchall()
    conn.close()
    assert rows == [("glove_core.events", 1)]


async def test_a_newer_events_table_is_refused_and_the_file_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.db"
    async with SqliteEventQueue(path, "conv") as queue:
        await queue.add(event("a"))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE glove_store_schema SET version = 2 WHERE component = 'glove_core.events'")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = path.read_bytes()
    newer = SqliteEventQueue(path, "conv")
    with pytest.raises(StoreVersionError, match="schema version 2"):
        await newer.pending()
    with pytest.raises(StoreVersionError):
        await newer.add(event("b"))
    await newer.aclose()
    assert path.read_bytes() == before


async def test_a_file_that_is_not_a_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database\n" * 100)
    queue = SqliteEventQueue(path, "conv")
    with pytest.raises(StoreCorruptError, match=r"notes\.txt"):
        await queue.add(event("a"))
    await queue.aclose()
    assert path.read_bytes() == b"not a database\n" * 100


async def test_the_queue_uses_the_layers_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    assert SqliteEventQueue(path, "conv").busy_timeout == SQLITE_BUSY_TIMEOUT
    async with SqliteEventQueue(path, "conv", busy_timeout=0) as impatient:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match="stayed locked"):
                await impatient.add(event("a"))
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert await impatient.pending() == []


async def test_a_closed_queue_refuses_calls(tmp_path: Path) -> None:
    queue = SqliteEventQueue(tmp_path / "e.db", "conv")
    await queue.add(event("a"))
    await queue.aclose()
    await queue.aclose()
    with pytest.raises(GloveStateError, match=r"SqliteEventQueue\(.*'conv'\) is closed"):
        await queue.pending()
