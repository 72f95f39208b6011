"""Where outside events wait until they reach the conversation.

``MemoryEventQueue`` lives and dies with the process; ``SqliteEventQueue`` keeps events in a
SQLite file so they survive a restart and are delivered exactly once.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from glove_core.errors import StoreCorruptError
from glove_core.stores._sqlite_schema import use_wal
from glove_core.types import ContentPart

__all__ = [
    "EventOutcome",
    "EventQueue",
    "MemoryEventQueue",
    "OutsideEvent",
    "SqliteEventQueue",
    "WhenIdle",
]

WhenIdle = Literal["auto", "wake", "defer"]
EventOutcome = Literal["injected", "dropped"]


class OutsideEvent(BaseModel):
    """Something that happened outside the conversation: a webhook, another agent's reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    source: str
    kind: str
    content: str | list[ContentPart]
    when_idle: WhenIdle = "auto"
    expires_at: datetime | None = None
    received_at: datetime


@runtime_checkable
class EventQueue(Protocol):
    """Holds events until they are injected or dropped; remembers every id it has seen."""

    async def add(self, event: OutsideEvent) -> bool:
        """Queue an event; False (and no change) when its id was seen before."""
        ...

    async def pending(self) -> list[OutsideEvent]:
        """Events neither injected nor dropped, oldest first."""
        ...

    async def mark(self, ids: list[str], outcome: EventOutcome) -> None:
        """Record that these events were injected or dropped."""
        ...


class MemoryEventQueue:
    """An in-process EventQueue."""

    def __init__(self) -> None:
        self._events: dict[str, OutsideEvent] = {}
        self._done: set[str] = set()

    async def add(self, event: OutsideEvent) -> bool:
        if event.id in self._events:
            return False
        self._events[event.id] = event
        return True

    async def pending(self) -> list[OutsideEvent]:
        return [e for i, e in self._events.items() if i not in self._done]

    async def mark(self, ids: list[str], outcome: EventOutcome) -> None:
        self._done.update(ids)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS glove_events (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (session_id, id)
)
"""


class SqliteEventQueue:
    """An EventQueue in a SQLite file (it may share the conversation's file).

    Events survive a process restart. Delivery is exactly once: the loop saves an injected
    batch under an id derived from its event ids and skips the save if that message already
    exists, so a crash between saving and marking cannot inject twice.

    Args:
        path: the SQLite file (created if missing).
        session_id: the conversation the events belong to.
    """

    def __init__(self, path: str | Path, session_id: str) -> None:
        self._path = str(path)
        self._session_id = session_id
        self._lock = asyncio.Lock()
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            if not self._ready:
                use_wal(conn, 30.0)
                conn.execute(_SCHEMA)
                self._ready = True
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreCorruptError(self._path, str(exc)) from exc
        return conn

    async def _run(self, fn: _Query) -> object:
        async with self._lock:
            return await asyncio.to_thread(self._call, fn)

    def _call(self, fn: _Query) -> object:
        conn = self._connect()
        try:
            return fn(conn)
        finally:
            conn.close()

    async def add(self, event: OutsideEvent) -> bool:
        payload = event.model_dump_json()

        def insert(conn: sqlite3.Connection) -> object:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO glove_events (session_id, id, seq, payload) VALUES "
                "(?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM glove_events WHERE session_id = ?),"
                " ?)",
                (self._session_id, event.id, self._session_id, payload),
            )
            return cursor.rowcount == 1

        return bool(await self._run(insert))

    async def pending(self) -> list[OutsideEvent]:
        def select(conn: sqlite3.Connection) -> object:
            return conn.execute(
                "SELECT payload FROM glove_events WHERE session_id = ? AND status = 'pending' "
                "ORDER BY seq",
                (self._session_id,),
            ).fetchall()

        rows = await self._run(select)
        assert isinstance(rows, list)
        return [OutsideEvent.model_validate_json(row[0]) for row in rows]

    async def mark(self, ids: list[str], outcome: EventOutcome) -> None:
        def update(conn: sqlite3.Connection) -> object:
            conn.executemany(
                "UPDATE glove_events SET status = ? WHERE session_id = ? AND id = ?",
                [(outcome, self._session_id, i) for i in ids],
            )
            return None

        await self._run(update)

    def __repr__(self) -> str:
        return f"SqliteEventQueue({self._path!r}, {self._session_id!r})"


class _Query(Protocol):
    def __call__(self, conn: sqlite3.Connection, /) -> object: ...
