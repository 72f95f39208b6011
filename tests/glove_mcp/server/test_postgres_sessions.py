"""The server's sessions in PostgreSQL: deleting one removes every row kept under its id."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

from datetime import UTC, datetime

from glove_core import Message
from glove_core.event_queue import OutsideEvent
from glove_core.event_queue_postgres import PostgresEventQueue
from glove_core.postgres import PostgresDatabase
from glove_mcp.adapter_postgres import PostgresMcpAdapter
from glove_mcp.server._postgres_sessions import PostgresSessionStorage


async def test_delete_removes_the_session_and_everything_under_its_id(postgres_url: str) -> None:
    storage = PostgresSessionStorage(PostgresDatabase(postgres_url))
    try:
        await storage.open()
        db = storage.database
        for sid in ("gone", "kept"):
            store = await storage.claim(sid, "default")
            assert store is not None
            await store.append_messages([Message(sender="user", text=sid)])
            await PostgresMcpAdapter(db, sid).activate("notes")
            queue = await PostgresEventQueue(db, sid).open()
            await queue.add(
                OutsideEvent(
                    id="e", source="s", kind="k", content="c", received_at=datetime.now(UTC)
                )
            )
            await queue.aclose()
        assert await storage.delete("gone") is True
        assert await storage.find("gone") is None
        assert await storage.delete("gone") is False
        assert await PostgresMcpAdapter(db, "gone").get_active() == []
        assert await PostgresEventQueue(db, "gone").pending() == []
        kept = await storage.find("kept")
        assert kept is not None and [m.text for m in await kept.get_messages()] == ["kept"]
        assert await PostgresMcpAdapter(db, "kept").get_active() == ["notes"]
    finally:
        await storage.aclose()
