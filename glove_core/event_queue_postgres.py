"""PostgresEventQueue: outside events of a conversation in PostgreSQL, for several instances.

The table is the truth: an event is queued once (its id is the key), delivered once (the turn
that injects it, holding the conversation's turn lock, marks it), and survives any instance.
A ``NOTIFY`` sent with each new event tells the other instances to look: a queue that is open
in another process hears it (``arrived_elsewhere``), so a turn running there takes the event
at its next tool step instead of after the turn.

Needs the ``postgres`` extra (``pip install 'glove-agents[postgres]'``).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any, ClassVar

from glove_core.event_queue import EventOutcome, OutsideEvent
from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema
from glove_core.resources import AsyncResource

__all__ = ["EVENTS_CHANNEL", "PostgresEventQueue"]

EVENTS_CHANNEL = "glove_events"
"""The channel a new event is announced on; the payload is the conversation id."""

_EVENTS_SCHEMA = PostgresSchema(
    name="glove_core.events",
    migrations=(
        (
            """CREATE TABLE glove_events (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (session_id, id)
)""",
            "CREATE INDEX glove_events_pending ON glove_events (session_id, seq) "
            "WHERE status = 'pending'",
        ),
    ),
)


class PostgresEventQueue(AsyncResource):
    """An ``EventQueue`` (and ``SizedEventQueue``) in PostgreSQL.

    Args:
        database: the process's ``PostgresDatabase``.
        session_id: the conversation the events belong to.

    ``open()`` (or ``async with``) also starts hearing other instances' events; ``aclose()``
    stops that (the database stays open: it belongs to its owner).
    """

    schema: ClassVar[PostgresSchema] = _EVENTS_SCHEMA
    """The events table, as registered with the PostgreSQL layer."""

    def __init__(self, database: PostgresDatabase, session_id: str) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
        self._db = database
        self._session_id = session_id
        self._heard = False
        self._listening: AsyncExitStack | None = None

    async def open(self) -> PostgresEventQueue:
        """Migrate the table and start hearing events queued by other instances."""
        await self._db.migrate(_EVENTS_SCHEMA)
        if self._listening is None:
            stack = AsyncExitStack()
            await stack.enter_async_context(
                self._db.subscribe(EVENTS_CHANNEL, self._session_id, self._hear)
            )
            self._listening = stack
        return self

    async def aclose(self) -> None:
        """Stop hearing other instances' events (idempotent)."""
        stack, self._listening = self._listening, None
        if stack is not None:
            await stack.aclose()

    async def _enter(self) -> None:
        await self.open()

    def _hear(self) -> None:
        self._heard = True

    def arrived_elsewhere(self) -> bool:
        """Whether an event was queued (by any instance) since the last call; resets."""
        heard, self._heard = self._heard, False
        return heard

    async def add(self, event: OutsideEvent) -> bool:
        """Queue an event and announce it; False (and no change) when its id was seen before."""
        sid = self._session_id
        payload = event.model_dump_json()

        async def insert(conn: Connection) -> bool:
            cursor = await conn.execute(
                "INSERT INTO glove_events (session_id, id, payload) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (sid, event.id, payload),
            )
            if cursor.rowcount != 1:
                return False
            await self._db.notify(conn, EVENTS_CHANNEL, sid)
            return True

        return bool(await self._call(insert, write=True))

    async def pending(self) -> list[OutsideEvent]:
        """Events neither injected nor dropped, oldest first."""

        async def select(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                "SELECT payload FROM glove_events WHERE session_id = %s AND status = 'pending' "
                "ORDER BY seq",
                (self._session_id,),
            )
            return await cursor.fetchall()

        return [OutsideEvent.model_validate_json(str(r[0])) for r in await self._call(select)]

    async def pending_size(self) -> tuple[int, int]:
        """``(count, bytes)`` of the pending events, without loading them."""

        async def select(conn: Connection) -> Any:
            cursor = await conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(OCTET_LENGTH(payload)), 0) FROM glove_events "
                "WHERE session_id = %s AND status = 'pending'",
                (self._session_id,),
            )
            return await cursor.fetchone()

        count, size = await self._call(select)
        return int(count), int(size)

    async def mark(self, ids: list[str], outcome: EventOutcome) -> None:
        """Record that these events were injected or dropped (all of them or none)."""
        if not ids:
            return

        async def update(conn: Connection) -> None:
            await conn.execute(
                "UPDATE glove_events SET status = %s WHERE session_id = %s AND id = ANY(%s)",
                (outcome, self._session_id, list(ids)),
            )

        await self._call(update, write=True)

    async def _call(self, fn: Any, *, write: bool = False) -> Any:
        await self._db.migrate(_EVENTS_SCHEMA)
        return await (self._db.write(fn) if write else self._db.read(fn))

    def __repr__(self) -> str:
        return f"PostgresEventQueue({self._db.name!r}, {self._session_id!r})"
