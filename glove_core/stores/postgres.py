"""PostgresStore: conversations in a PostgreSQL database shared by several processes and machines.

The same contract as ``SqliteStore`` — every capability, messages stored as their pydantic
JSON, each write one transaction — on the PostgreSQL layer (``glove_core.postgres``): one
``PostgresDatabase`` per process holds the pool, and any number of stores (one per
conversation) share it. The turn lock is a session-level advisory lock held on a connection of
its own for the turn, so turns of one conversation never overlap across machines and a holder
that dies releases it (its connection closes).

Needs the ``postgres`` extra (``pip install 'glove-agents[postgres]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, cast

import psycopg

from glove_core.abort import AbortSignal
from glove_core.errors import ConversationLockedError, InboxItemError
from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema
from glove_core.resources import AsyncResource
from glove_core.stores._postgres_statements import (
    REQUEST_START,
    append_statement,
    request_start,
)
from glove_core.stores._postgres_tables import STORE_SCHEMA, touch
from glove_core.stores._rows import (
    RESET_COUNTERS,
    TASKS,
    USAGE_COLUMNS,
    check_store_args,
    parse_messages,
    usage_from_row,
)
from glove_core.stores._sqlite_tables import now
from glove_core.stores._turn_lock import DEFAULT_TURN_LOCK_TIMEOUT
from glove_core.stores.base import (
    InboxStatus,
    PermissionStatus,
    RequestStart,
    check_start,
    inbox_changes,
)
from glove_core.types import InboxItem, Message, Task, Usage

__all__ = ["SAVES_CHANNEL", "PostgresStore", "deleted_payload", "turn_lock_name"]

SAVES_CHANNEL = "glove_stream"


def deleted_payload(session_id: str) -> str:
    """The ``SAVES_CHANNEL`` payload that announces ``session_id``'s deletion (a space, which
    no server session id holds, keeps it apart from the save notices' bare id)."""
    return f"deleted {session_id}"


"""The channel every append is announced on (payload: the conversation id), so a follower on
any instance reads what another instance saved as soon as it is committed."""


def turn_lock_name(conversation_id: str) -> str:
    """The advisory lock a turn of ``conversation_id`` holds."""
    return f"glove.turn:{conversation_id}"


class PostgresStore(AsyncResource):
    """A conversation kept in PostgreSQL, with every optional capability.

    Implements ``StoreAdapter`` and the task, permission, inbox, turn-lock,
    compacted-history, positional-history, reply and request-start capabilities. The store
    owns nothing: close the ``PostgresDatabase`` (once, for every store on it) when done;
    ``async with`` on the store only migrates early.

    Args:
        database: the process's ``PostgresDatabase`` (its pool is shared by every store).
        session_id: the conversation's id.
        turn_lock_timeout: seconds a turn waits for a turn of the same conversation running
            elsewhere (another machine, process or store object) before raising
            ``ConversationLockedError``; default 300, None waits as long as it takes.

    Raises:
        ValueError: an empty session id or a negative timeout.
        StoreVersionError: (on first use) the database has a newer schema than this glove.
        StoreError: (on any call) the database cannot be reached, or no pooled connection came
            free within the database's timeout.
    """

    schema: ClassVar[PostgresSchema] = STORE_SCHEMA
    """The conversation tables, as registered with the PostgreSQL layer."""

    def __init__(
        self,
        database: PostgresDatabase,
        session_id: str,
        *,
        turn_lock_timeout: float | None = DEFAULT_TURN_LOCK_TIMEOUT,
    ) -> None:
        check_store_args(session_id, turn_lock_timeout)
        self._db = database
        self._session_id = session_id
        self._turn_lock_timeout = turn_lock_timeout

    @property
    def identifier(self) -> str:
        """The conversation's id (``session_id``)."""
        return self._session_id

    @property
    def database(self) -> PostgresDatabase:
        """The database the conversation lives in."""
        return self._db

    @property
    def turn_lock_timeout(self) -> float | None:
        """Seconds a turn waits for another holder of the conversation's turn lock."""
        return self._turn_lock_timeout

    async def open(self) -> PostgresStore:
        """Reach the database and migrate the tables now (otherwise the first call does)."""
        await self._db.migrate(STORE_SCHEMA)
        return self

    async def aclose(self) -> None:
        """Nothing to close: the database's pool belongs to its owner. Present so the server
        can close any store alike."""

    async def _enter(self) -> None:
        await self.open()

    def turn_lock(self, signal: AbortSignal) -> AbstractAsyncContextManager[None]:
        """Hold this conversation's turn lock while the ``async with`` block runs (the
        ``TurnLockStore`` capability), across every machine on the database.

        Raises:
            ConversationLockedError: another holder kept it past ``turn_lock_timeout``.
            AbortError: ``signal`` fired while waiting.
        """
        sid = self._session_id
        where = f"advisory lock {turn_lock_name(sid)!r} on {self._db.name}"
        return self._db.lock(
            turn_lock_name(sid),
            signal,
            self._turn_lock_timeout,
            lambda waited: ConversationLockedError(sid, where, waited),
        )

    # -- messages and counters --------------------------------------------------------------

    async def get_messages(self) -> list[Message]:
        """Every saved message of the conversation, oldest first."""
        return await self._load("")

    async def get_messages_since_compaction(self) -> list[Message]:
        """The newest compaction message and every message after it, oldest first; every
        message when the conversation was never compacted. One statement, two index scans."""
        return await self._load(
            "AND seq >= COALESCE((SELECT MAX(seq) FROM glove_messages WHERE session_id = %s "
            "AND is_compaction), 0)"
        )

    async def read_request_start(self) -> RequestStart:
        """The visible history, the token totals and every inbox item: one statement (the
        ``RequestStartStore`` capability), one snapshot."""
        sid = self._session_id

        async def read(conn: Connection) -> Any:
            cursor = await conn.execute(REQUEST_START, {"sid": sid})
            return await cursor.fetchone()

        return request_start(await self._call(read), self._db.name, sid)

    async def count_messages(self) -> int:
        """How many messages the conversation has (an index count; nothing is parsed)."""
        sid = self._session_id

        async def read(conn: Connection) -> int:
            cursor = await conn.execute(
                "SELECT count(*) FROM glove_messages WHERE session_id = %s", (sid,)
            )
            row = await cursor.fetchone()
            return cast(int, row[0]) if row else 0  # count(*): a bigint, an int in Python

        count: int = await self._call(read)
        return count

    async def get_messages_from(self, start: int) -> list[Message]:
        """The messages from position ``start`` on, oldest first; the rows before it are
        skipped in the ``(session_id, seq)`` index, never parsed."""
        return await self._load("", "OFFSET %s", check_start(start))

    async def _load(self, condition: str, tail: str = "", *tail_params: int) -> list[Message]:
        sid = self._session_id
        params = ((sid, sid) if condition else (sid,)) + tail_params

        async def read(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                f"SELECT seq, data FROM glove_messages WHERE session_id = %s {condition} "
                f"ORDER BY seq {tail}",
                params,
            )
            return await cursor.fetchall()

        rows = await self._call(read)
        return parse_messages(rows, self._db.name, sid)

    async def append_messages(self, messages: list[Message]) -> None:
        """Save messages at the end of the conversation, in one transaction (all or none)."""
        if messages:
            await self._append(messages, None)

    async def append_reply(self, message: Message, usage: Usage) -> None:
        """Save a model's reply, add its tokens to the totals and count the model call: one
        statement, one transaction (the ``ReplyStore`` capability)."""
        await self._append([message], usage)

    async def _append(self, messages: list[Message], usage: Usage | None) -> None:
        """One statement, all of it or none (``_postgres_statements``)."""
        statement, params = append_statement(self._session_id, messages, usage, SAVES_CHANNEL)

        async def write(conn: Connection) -> None:
            await conn.execute(statement, params)

        await self._call(write)

    async def get_usage(self) -> Usage:
        """Tokens used by this conversation so far."""
        return usage_from_row(await self._session_row(USAGE_COLUMNS))

    async def add_usage(self, usage: Usage) -> None:
        """Add one model call's tokens to the total (atomic, also across machines)."""
        await self._update_session(
            "input_tokens = input_tokens + %s, output_tokens = output_tokens + %s, "
            "cache_read_tokens = cache_read_tokens + %s, "
            "cache_write_tokens = cache_write_tokens + %s",
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
            ),
        )

    async def get_turn_count(self) -> int:
        """How many model calls this conversation made."""
        row = await self._session_row("turns")
        return 0 if row is None else int(row[0])

    async def increment_turn(self) -> None:
        """Count one more model call."""
        await self._update_session("turns = turns + 1", ())

    async def reset_counters(self) -> None:
        """Set the token and turn counters to zero."""
        await self._update_session(RESET_COUNTERS, ())

    def on_saved(self, callback: Callable[[], None]) -> AbstractAsyncContextManager[None]:
        """Call ``callback`` after each append to this conversation by any instance (the
        notification arrives once the append is committed) while the block runs: a follower
        then reads the messages saved since its last read. After a lost LISTEN connection came
        back it is called once too, since what was sent meanwhile is gone."""
        return self._db.subscribe(SAVES_CHANNEL, self._session_id, callback)

    def on_deleted(self, callback: Callable[[], None]) -> AbstractAsyncContextManager[None]:
        """Call ``callback`` when any instance announces this conversation's deletion
        (``deleted_payload``; the headless server's delete does) while the block runs, and
        once after a lost LISTEN connection came back."""
        return self._db.subscribe(SAVES_CHANNEL, deleted_payload(self._session_id), callback)

    # -- tasks and permissions --------------------------------------------------------------

    async def get_tasks(self) -> list[Task]:
        """The current task list."""
        row = await self._session_row("tasks")
        return [] if row is None else TASKS.validate_json(row[0])

    async def set_tasks(self, tasks: list[Task]) -> None:
        """Replace the whole task list."""
        await self._update_session("tasks = %s", (TASKS.dump_json(list(tasks)).decode(),))

    async def get_permission(self, tool_name: str, input_key: str) -> PermissionStatus | None:
        """The remembered answer for this tool and input, or None."""
        sid = self._session_id

        async def read(conn: Connection) -> Any:
            cursor = await conn.execute(
                "SELECT status FROM glove_permissions WHERE session_id = %s AND tool_name = %s "
                "AND input_key = %s",
                (sid, tool_name, input_key),
            )
            return await cursor.fetchone()

        row = await self._call(read)
        if row is None:
            return None
        return "granted" if row[0] == "granted" else "denied"

    async def set_permission(
        self, tool_name: str, input_key: str, status: PermissionStatus
    ) -> None:
        """Remember an answer for this tool and input."""
        if status not in ("granted", "denied"):
            raise ValueError(f"status must be 'granted' or 'denied', got {status!r}")
        sid = self._session_id

        async def write(conn: Connection) -> None:
            await touch(conn, sid)
            await conn.execute(
                "INSERT INTO glove_permissions (session_id, tool_name, input_key, status) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (session_id, tool_name, input_key) "
                "DO UPDATE SET status = excluded.status",
                (sid, tool_name, input_key, status),
            )

        await self._call(write, write=True)

    # -- inbox ------------------------------------------------------------------------------

    async def get_inbox_items(self) -> list[InboxItem]:
        """Every inbox item of the conversation, oldest first."""
        return await self._inbox_where("")

    async def get_resolved_inbox_items(self) -> list[InboxItem]:
        """Items resolved but not yet shown to the agent, oldest first."""
        return await self._inbox_where("AND status = 'resolved'")

    async def add_inbox_item(self, item: InboxItem) -> None:
        """Save a new item.

        Raises:
            InboxItemError: the conversation already has an item with that id.
        """
        sid = self._session_id

        async def write(conn: Connection) -> None:
            await touch(conn, sid)
            await conn.execute(
                "INSERT INTO glove_inbox (session_id, item_id, data, status) "
                "VALUES (%s, %s, %s, %s)",
                (sid, item.id, item.model_dump_json(), item.status),
            )

        try:
            await self._call(write, write=True)
        except psycopg.errors.UniqueViolation:
            raise InboxItemError(
                item.id, f"already exists in conversation {sid!r}; use a new id"
            ) from None

    async def update_inbox_item(
        self,
        item_id: str,
        *,
        status: InboxStatus | None = None,
        response: str | None = None,
        resolved_at: str | None = None,
    ) -> None:
        """Change an item's status, response or resolution time (None leaves a field as is).

        Raises:
            InboxItemError: the conversation has no item with that id.
        """
        sid = self._session_id
        changes = inbox_changes(status, response, resolved_at)

        async def write(conn: Connection) -> None:
            cursor = await conn.execute(
                "SELECT data FROM glove_inbox WHERE session_id = %s AND item_id = %s FOR UPDATE",
                (sid, item_id),
            )
            row = await cursor.fetchone()
            if row is None:
                raise InboxItemError(item_id, f"no such item in conversation {sid!r}")
            item = InboxItem.model_validate_json(str(row[0])).model_copy(update=changes)
            await touch(conn, sid)
            await conn.execute(
                "UPDATE glove_inbox SET data = %s, status = %s WHERE session_id = %s "
                "AND item_id = %s",
                (item.model_dump_json(), item.status, sid, item.id),
            )

        await self._call(write, write=True)

    # -- sessions ---------------------------------------------------------------------------

    async def create_session(self) -> bool:
        """Record the conversation: True when this call created it, False when it existed. Of
        racing callers, on any machine, exactly one gets True (one primary-key insert)."""
        sid = self._session_id

        async def write(conn: Connection) -> bool:
            stamp = now()
            cursor = await conn.execute(
                "INSERT INTO glove_sessions (session_id, created_at, updated_at) "
                "VALUES (%s, %s, %s) ON CONFLICT (session_id) DO NOTHING",
                (sid, stamp, stamp),
            )
            return cursor.rowcount == 1

        created: bool = await self._call(write, write=True)
        return created

    async def session_exists(self) -> bool:
        """Whether the conversation has been recorded (one primary-key lookup)."""
        return await self._session_row("1") is not None

    # -- helpers ----------------------------------------------------------------------------

    async def _call(self, fn: Any, *, write: bool = False) -> Any:
        await self._db.migrate(STORE_SCHEMA)
        return await (self._db.write(fn) if write else self._db.read(fn))

    async def _session_row(self, columns: str) -> Any:
        sid = self._session_id

        async def read(conn: Connection) -> Any:
            cursor = await conn.execute(
                f"SELECT {columns} FROM glove_sessions WHERE session_id = %s", (sid,)
            )
            return await cursor.fetchone()

        return await self._call(read)

    async def _update_session(self, assignments: str, params: Sequence[object]) -> None:
        sid = self._session_id
        statement = (
            f"UPDATE glove_sessions SET updated_at = %s, {assignments} WHERE session_id = %s"
        )

        async def update(conn: Connection) -> int:
            cursor = await conn.execute(statement, (now(), *params, sid))
            return cursor.rowcount

        # One statement, atomic on its own, for a session that has its row (every one but a
        # brand-new session): a round trip instead of a four-statement transaction.
        if await self._call(update) == 1:
            return

        async def create_and_update(conn: Connection) -> None:
            await touch(conn, sid)
            await update(conn)

        await self._call(create_and_update, write=True)

    async def _inbox_where(self, condition: str) -> list[InboxItem]:
        sid = self._session_id

        async def read(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                f"SELECT data FROM glove_inbox WHERE session_id = %s {condition} ORDER BY seq",
                (sid,),
            )
            return await cursor.fetchall()

        return [InboxItem.model_validate_json(str(r[0])) for r in await self._call(read)]

    def __repr__(self) -> str:
        return f"PostgresStore({self._db.name!r}, {self._session_id!r})"
