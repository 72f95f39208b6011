"""Where outside events wait until they reach the conversation.

``MemoryEventQueue`` lives and dies with the process; ``SqliteEventQueue`` keeps events in a
SQLite file so they survive a restart and are delivered exactly once.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from glove_core.resources import AsyncResource
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT, SqliteDatabase, SqliteSchema
from glove_core.types import ContentPart

__all__ = [
    "EventOutcome",
    "EventQueue",
    "MemoryEventQueue",
    "NotifyingEventQueue",
    "OutsideEvent",
    "SizedEventQueue",
    "SqliteEventQueue",
    "WhenIdle",
    "pending_size",
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


@runtime_checkable
class SizedEventQueue(Protocol):
    """Optional: an EventQueue that can say how much waits without loading the events."""

    async def pending_size(self) -> tuple[int, int]:
        """``(count, bytes)`` of the pending events, bytes as their JSON in UTF-8."""
        ...


@runtime_checkable
class NotifyingEventQueue(Protocol):
    """Optional: an EventQueue shared by several processes that hears events others queue.

    A turn reads the queue between tool steps only when an event arrived; events queued
    through another process's Glove (another server instance) arrive here.
    """

    def arrived_elsewhere(self) -> bool:
        """Whether an event was queued since the last call (resets)."""
        ...


async def pending_size(queue: EventQueue) -> tuple[int, int]:
    """``(count, bytes)`` of the events pending in ``queue``, cheaply when it is sized."""
    if isinstance(queue, SizedEventQueue):
        return await queue.pending_size()
    events = await queue.pending()
    return len(events), sum(len(e.model_dump_json().encode()) for e in events)


class MemoryEventQueue:
    """An in-process EventQueue."""

    def __init__(self) -> None:
        self._events: dict[str, OutsideEvent] = {}
        self._sizes: dict[str, int] = {}  # of the pending events, so emit need not re-encode
        self._done: set[str] = set()

    async def add(self, event: OutsideEvent) -> bool:
        if event.id in self._events:
            return False
        self._events[event.id] = event
        self._sizes[event.id] = len(event.model_dump_json().encode())
        return True

    async def pending(self) -> list[OutsideEvent]:
        return [e for i, e in self._events.items() if i not in self._done]

    async def pending_size(self) -> tuple[int, int]:
        """``(count, bytes)`` of the pending events."""
        return len(self._sizes), sum(self._sizes.values())

    async def mark(self, ids: list[str], outcome: EventOutcome) -> None:
        self._done.update(ids)
        for event_id in ids:
            self._sizes.pop(event_id, None)


_EVENTS_SCHEMA = SqliteSchema(
    name="glove_core.events",
    migrations=(
        (
            """CREATE TABLE glove_events (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (session_id, id)
)""",
        ),
    ),
    # Queues before the shared SQLite layer created the table without recording a version.
    unversioned_tables=("glove_events",),
)


class SqliteEventQueue(AsyncResource):
    """An EventQueue in a SQLite file (it may share the conversation's file).

    Events survive a process restart. Delivery is exactly once: the loop saves an injected
    batch under an id derived from its event ids and skips the save if that message already
    exists, so a crash between saving and marking cannot inject twice.

    The file is opened through the SQLite layer (``glove_core.sqlite``): one connection, opened
    by the first call, used from worker threads; table ``glove_events`` is component
    ``glove_core.events``. Close with ``aclose()`` (or ``async with``); a queue that is never
    closed releases the file when it is garbage collected.

    Args:
        path: the SQLite file (created if missing).
        session_id: the conversation the events belong to.
        busy_timeout: seconds a write waits for another connection's write before raising
            ``StoreError``.
        check_pages: run SQLite's ``quick_check`` when the connection opens (it reads the
            whole file: about 0.7 ms per MB). False only where this process has checked the
            file already, as the headless server does once for all its sessions.

    Raises:
        StoreCorruptError: (on first use) the file is not a SQLite database or is damaged.
        StoreVersionError: (on first use) the file has a newer version of the events table.
    """

    schema: ClassVar[SqliteSchema] = _EVENTS_SCHEMA
    """The events table, as registered with the SQLite layer."""

    def __init__(
        self,
        path: str | Path,
        session_id: str,
        *,
        busy_timeout: float = SQLITE_BUSY_TIMEOUT,
        check_pages: bool = True,
    ) -> None:
        self._path = str(path)
        self._session_id = session_id
        self._db = SqliteDatabase(
            self._path,
            _EVENTS_SCHEMA,
            busy_timeout=busy_timeout,
            owner=repr(self),
            check_pages=check_pages,
        )

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for another connection's write."""
        return self._db.busy_timeout

    async def open(self) -> SqliteEventQueue:
        """Open the file now (otherwise the first call does), so a bad file fails early."""
        await self._db.open()
        return self

    async def aclose(self) -> None:
        """Close the connection. Idempotent; later calls raise ``GloveStateError``."""
        await self._db.aclose()

    async def _enter(self) -> None:
        await self.open()

    async def add(self, event: OutsideEvent) -> bool:
        """Queue an event; False (and no change) when its id was seen before."""
        payload = event.model_dump_json()

        def insert(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO glove_events (session_id, id, seq, payload) VALUES "
                "(?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM glove_events WHERE session_id = ?),"
                " ?)",
                (self._session_id, event.id, self._session_id, payload),
            )
            return cursor.rowcount == 1

        return await self._db.write(insert)

    async def pending(self) -> list[OutsideEvent]:
        """Events neither injected nor dropped, oldest first."""

        def select(conn: sqlite3.Connection) -> list[tuple[str]]:
            rows: list[tuple[str]] = conn.execute(
                "SELECT payload FROM glove_events WHERE session_id = ? AND status = 'pending' "
                "ORDER BY seq",
                (self._session_id,),
            ).fetchall()
            return rows

        rows = await self._db.read(select)
        return [OutsideEvent.model_validate_json(row[0]) for row in rows]

    async def pending_size(self) -> tuple[int, int]:
        """``(count, bytes)`` of the pending events, without loading them."""

        def select(conn: sqlite3.Connection) -> tuple[int, int]:
            count, size = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(payload AS BLOB))), 0) "
                "FROM glove_events WHERE session_id = ? AND status = 'pending'",
                (self._session_id,),
            ).fetchone()
            return int(count), int(size)

        return await self._db.read(select)

    async def mark(self, ids: list[str], outcome: EventOutcome) -> None:
        """Record that these events were injected or dropped (all of them or none)."""
        if not ids:
            return

        def update(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "UPDATE glove_events SET status = ? WHERE session_id = ? AND id = ?",
                [(outcome, self._session_id, i) for i in ids],
            )

        await self._db.write(update)

    def __repr__(self) -> str:
        return f"SqliteEventQueue({self._path!r}, {self._session_id!r})"
