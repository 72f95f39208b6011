"""SqliteStore: conversations in a SQLite file that survive restarts and crashes.

One file holds any number of conversations (sessions), and may also hold a
``SqliteEventQueue`` and a ``glove_mcp.SqliteMcpAdapter``. Several ``SqliteStore`` objects, in
one process or several, may use the same file at once. The file is opened through the SQLite
layer (``glove_core.sqlite``): WAL mode (readers never wait for the writer), one
``BEGIN IMMEDIATE`` transaction per write, a busy timeout that makes a writer wait for another,
one connection per store object opened lazily and used from worker threads only.

Messages are stored as their pydantic JSON (``Message.model_dump_json``), so every field —
``is_compaction``, ``framework_context``, content parts, tool calls and results — comes back
exactly as it was saved. The tables are versioned (component ``glove_core.conversations`` in
``glove_store_schema``) and migrated forward on open; a file of a newer version, or one that is
not a SQLite database, raises and is left untouched.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, ClassVar

from pydantic import TypeAdapter

from glove_core.abort import AbortSignal
from glove_core.errors import InboxItemError
from glove_core.resources import AsyncResource
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT, SqliteDatabase, SqliteSchema
from glove_core.stores import _sqlite_messages, _sqlite_outside, _sqlite_sessions
from glove_core.stores._rows import (
    RESET_COUNTERS,
    USAGE_COLUMNS,
    parse_messages,
    usage_from_row,
)
from glove_core.stores._sqlite_outside import SessionInfo
from glove_core.stores._sqlite_tables import STORE_SCHEMA, save_item, touch
from glove_core.stores._turn_lock import DEFAULT_TURN_LOCK_TIMEOUT, lock_file_path, turn_lock
from glove_core.stores.base import InboxStatus, PermissionStatus, check_start, inbox_changes
from glove_core.types import InboxItem, Message, Task, Usage

__all__ = ["SCHEMA_VERSION", "SessionInfo", "SqliteStore"]

SCHEMA_VERSION = STORE_SCHEMA.version
"""The version of the conversation tables this glove writes and reads (older files are
migrated forward)."""

_TASKS = TypeAdapter(list[Task])


class SqliteStore(AsyncResource):
    """A conversation kept in a SQLite file, with every optional capability.

    Implements ``StoreAdapter`` and the compacted-history, positional-history, task,
    permission, inbox and turn-lock capabilities.
    Use it as an async context manager, or call ``aclose()`` when done; the file is created
    (and its schema migrated) by the first call that needs it.

    Each write is atomic across processes; whole turns are too: a Glove on this store holds
    the conversation's turn lock (``TurnLockStore``) for each turn, so Gloves in several
    processes on one conversation take turns instead of interleaving tool calls and results.
    The lock is an ``flock`` on ``<path>-turns/<session>.lock``, released by the kernel when
    its holder dies; it holds for processes on one machine using the same file (see
    ``glove_core.stores._turn_lock``).

    Args:
        path: the database file; created when missing. May be shared with other stores,
            sessions and processes.
        session_id: the conversation's id within the file.
        busy_timeout: seconds a write waits for another connection's write to finish before
            raising ``StoreError``.
        turn_lock_timeout: seconds a turn waits for a turn of the same conversation running
            elsewhere (another process or store object) before raising
            ``ConversationLockedError``; default 300, None waits as long as it takes.
        check_pages: run ``quick_check`` at open; see ``SqliteDatabase`` for when not to.

    Raises:
        StoreCorruptError: (on first use) the file is not a SQLite database or is damaged.
        StoreVersionError: (on first use) the file has a newer schema than this glove reads.
        StoreError: (on any call) the file cannot be opened or written, e.g. it stayed locked
            longer than ``busy_timeout``.

    Example:
        >>> async with SqliteStore("chat.db", "session-1") as store:  # doctest: +SKIP
        ...     agent = Glove(model, "Be brief.", store=store).build()
    """

    schema: ClassVar[SqliteSchema] = STORE_SCHEMA
    """The conversation tables, as registered with the SQLite layer."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        session_id: str,
        *,
        busy_timeout: float = SQLITE_BUSY_TIMEOUT,
        turn_lock_timeout: float | None = DEFAULT_TURN_LOCK_TIMEOUT,
        check_pages: bool = True,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must be 0 or more seconds, got {busy_timeout}")
        if turn_lock_timeout is not None and not turn_lock_timeout >= 0:
            raise ValueError(
                f"turn_lock_timeout must be 0 or more seconds, or None (no limit), got "
                f"{turn_lock_timeout}"
            )
        self._path = os.fspath(path)
        self._session_id = session_id
        self._turn_lock_timeout = turn_lock_timeout
        self._db = SqliteDatabase(
            self._path,
            STORE_SCHEMA,
            busy_timeout=busy_timeout,
            owner=repr(self),
            check_pages=check_pages,
        )

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def identifier(self) -> str:
        """The conversation's id (``session_id``)."""
        return self._session_id

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for another connection's write."""
        return self._db.busy_timeout

    @property
    def turn_lock_timeout(self) -> float | None:
        """Seconds a turn waits for another holder of the conversation's turn lock."""
        return self._turn_lock_timeout

    def turn_lock(self, signal: AbortSignal) -> AbstractAsyncContextManager[None]:
        """Hold this conversation's turn lock while the ``async with`` block runs (the
        ``TurnLockStore`` capability; a Glove takes it around every turn).

        Raises:
            ConversationLockedError: another holder kept it past ``turn_lock_timeout``.
            AbortError: ``signal`` fired while waiting.
        """
        if self._path == ":memory:":
            return nullcontext()  # a private database: no other process can see it
        path = lock_file_path(self._path, self._session_id)
        return turn_lock(path, self._session_id, signal, self._turn_lock_timeout)

    async def open(self) -> SqliteStore:
        """Open the file now (otherwise the first call does), so a bad file fails early.

        Raises:
            StoreCorruptError: the file is not a SQLite database or is damaged.
            StoreVersionError: the file has a newer schema than this glove reads.
        """
        await self._db.open()
        return self

    async def aclose(self) -> None:
        """Close the connection. Idempotent; later calls raise ``GloveStateError``."""
        await self._db.aclose()

    async def _enter(self) -> None:
        await self.open()

    # -- messages and counters --------------------------------------------------------------

    async def get_messages(self) -> list[Message]:
        """Every saved message of the conversation, oldest first."""
        return await self._load(_sqlite_messages.all_rows(self._session_id))

    async def get_messages_since_compaction(self) -> list[Message]:
        """The newest compaction message and every message after it, oldest first; every
        message when the conversation was never compacted (the ``CompactedHistoryStore``
        capability). Two index lookups: the cost follows what the model sees, not the length
        of the whole conversation."""
        return await self._load(_sqlite_messages.rows_since_compaction(self._session_id))

    async def count_messages(self) -> int:
        """How many messages the conversation has (an index count; nothing is parsed)."""
        return await self._db.read(_sqlite_messages.count_rows(self._session_id))

    async def get_messages_from(self, start: int) -> list[Message]:
        """The messages from position ``start`` on, oldest first: the rows before it are
        skipped in the ``(session_id, seq)`` index, never read or parsed."""
        return await self._load(_sqlite_messages.rows_from(self._session_id, check_start(start)))

    async def append_messages(self, messages: list[Message]) -> None:
        """Save messages at the end of the conversation, in one transaction (all or none)."""
        if messages:
            await self._db.write(_sqlite_messages.insert_messages(self._session_id, messages))

    async def _load(
        self, read: Callable[[sqlite3.Connection], list[tuple[int, str]]]
    ) -> list[Message]:
        def load() -> list[Message]:
            # Parsed outside the lock, so other calls on this store need not wait for it.
            return parse_messages(self._db.read_sync(read), self._path, self._session_id)

        return await asyncio.to_thread(load)

    async def get_usage(self) -> Usage:
        """Tokens used by this conversation so far."""
        return usage_from_row(await self._session_row(USAGE_COLUMNS))

    async def add_usage(self, usage: Usage) -> None:
        """Add one model call's tokens to the total (atomic, also across processes)."""
        sid = self._session_id

        def write(conn: sqlite3.Connection) -> None:
            touch(conn, sid)
            conn.execute(
                "UPDATE glove_sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens "
                "+ ?, cache_write_tokens = cache_write_tokens + ? WHERE session_id = ?",
                (
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                    sid,
                ),
            )

        await self._db.write(write)

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

    # -- tasks ------------------------------------------------------------------------------

    async def get_tasks(self) -> list[Task]:
        """The current task list."""
        row = await self._session_row("tasks")
        return [] if row is None else _TASKS.validate_json(row[0])

    async def set_tasks(self, tasks: list[Task]) -> None:
        """Replace the whole task list."""
        data = _TASKS.dump_json(list(tasks)).decode()
        await self._update_session("tasks = ?", (data,))

    # -- permissions ------------------------------------------------------------------------

    async def get_permission(self, tool_name: str, input_key: str) -> PermissionStatus | None:
        """The remembered answer for this tool and input, or None."""
        sid = self._session_id

        def read(conn: sqlite3.Connection) -> PermissionStatus | None:
            row = conn.execute(
                "SELECT status FROM glove_permissions WHERE session_id = ? AND tool_name = ? "
                "AND input_key = ?",
                (sid, tool_name, input_key),
            ).fetchone()
            if row is None:
                return None
            status: PermissionStatus = "granted" if row[0] == "granted" else "denied"
            return status

        return await self._db.read(read)

    async def set_permission(
        self, tool_name: str, input_key: str, status: PermissionStatus
    ) -> None:
        """Remember an answer for this tool and input."""
        if status not in ("granted", "denied"):
            raise ValueError(f"status must be 'granted' or 'denied', got {status!r}")
        sid = self._session_id

        def write(conn: sqlite3.Connection) -> None:
            touch(conn, sid)
            conn.execute(
                "INSERT INTO glove_permissions (session_id, tool_name, input_key, status) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id, tool_name, input_key) "
                "DO UPDATE SET status = excluded.status",
                (sid, tool_name, input_key, status),
            )

        await self._db.write(write)

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
        data = item.model_dump_json()

        def write(conn: sqlite3.Connection) -> None:
            touch(conn, sid)
            try:
                conn.execute(
                    "INSERT INTO glove_inbox (session_id, item_id, data, status) "
                    "VALUES (?, ?, ?, ?)",
                    (sid, item.id, data, item.status),
                )
            except sqlite3.IntegrityError:
                raise InboxItemError(
                    item.id, f"already exists in conversation {sid!r}; use a new id"
                ) from None

        await self._db.write(write)

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

        def write(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT data FROM glove_inbox WHERE session_id = ? AND item_id = ?",
                (sid, item_id),
            ).fetchone()
            if row is None:
                raise InboxItemError(item_id, f"no such item in conversation {sid!r}")
            item = InboxItem.model_validate_json(row[0]).model_copy(update=changes)
            save_item(conn, sid, item)

        await self._db.write(write)

    async def create_session(self) -> bool:
        """Record the conversation in the file: True when this call created it, False when it
        existed. One primary-key insert (its cost does not grow with the number of sessions);
        of racing callers, in one process or several, exactly one gets True."""
        sid = self._session_id
        return await self._db.write(lambda conn: _sqlite_sessions.create_session(conn, sid))

    async def session_exists(self) -> bool:
        """Whether the conversation has been recorded in the file (one primary-key lookup)."""
        sid = self._session_id
        return await self._db.read(lambda conn: _sqlite_sessions.session_exists(conn, sid))

    # -- outside processes ------------------------------------------------------------------

    @staticmethod
    def list_sessions_sync(path: str | os.PathLike[str]) -> list[SessionInfo]:
        """The conversations in a store file, oldest first. Blocking: for scripts and threads;
        use ``list_sessions`` from async code.

        Raises:
            StoreNotFoundError: no file at ``path`` (none is created).
            StoreCorruptError: the file is not a SQLite database or is damaged.
            StoreVersionError: the file has a newer schema than this glove reads.
        """

        return _sqlite_outside.list_sessions(path)

    @staticmethod
    async def list_sessions(path: str | os.PathLike[str]) -> list[SessionInfo]:
        """The conversations in a store file, oldest first (see ``list_sessions_sync``)."""
        return await asyncio.to_thread(SqliteStore.list_sessions_sync, path)

    @staticmethod
    def resolve_inbox_item_sync(
        path: str | os.PathLike[str],
        item_id: str,
        response: str,
        session_id: str | None = None,
    ) -> InboxItem:
        """Resolve a pending inbox item from outside the agent's process. Blocking: for
        scripts, cron jobs and webhook handlers; use ``resolve_inbox_item`` from async code.

        The agent sees the response at the start of its next request.

        Args:
            path: the store file.
            item_id: the item's id (the agent's ``glove_post_to_inbox`` returned it).
            response: the answer, as text for the agent.
            session_id: the conversation; needed only when two conversations use the same
                item id.

        Returns:
            The item as saved, with ``status="resolved"``.

        Raises:
            InboxItemError: no such item, the id is ambiguous, or it is not pending.
            StoreNotFoundError: no file at ``path`` (none is created).
            StoreCorruptError: the file is not a SQLite database or is damaged.
            StoreVersionError: the file has a newer schema than this glove reads.
        """

        return _sqlite_outside.resolve_inbox_item(path, item_id, response, session_id)

    @staticmethod
    async def resolve_inbox_item(
        path: str | os.PathLike[str],
        item_id: str,
        response: str,
        session_id: str | None = None,
    ) -> InboxItem:
        """Resolve a pending inbox item from outside the agent (see ``resolve_inbox_item_sync``)."""
        return await asyncio.to_thread(
            SqliteStore.resolve_inbox_item_sync, path, item_id, response, session_id
        )

    # -- helpers ----------------------------------------------------------------------------

    async def _session_row(self, columns: str) -> tuple[Any, ...] | None:
        sid = self._session_id

        def read(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            row: tuple[Any, ...] | None = conn.execute(
                f"SELECT {columns} FROM glove_sessions WHERE session_id = ?", (sid,)
            ).fetchone()
            return row

        return await self._db.read(read)

    async def _update_session(self, assignments: str, params: Sequence[object]) -> None:
        sid = self._session_id

        def write(conn: sqlite3.Connection) -> None:
            touch(conn, sid)
            conn.execute(
                f"UPDATE glove_sessions SET {assignments} WHERE session_id = ?",
                (*params, sid),
            )

        await self._db.write(write)

    async def _inbox_where(self, condition: str) -> list[InboxItem]:
        sid = self._session_id

        def read(conn: sqlite3.Connection) -> list[InboxItem]:
            rows = conn.execute(
                f"SELECT data FROM glove_inbox WHERE session_id = ? {condition} ORDER BY rowid",
                (sid,),
            ).fetchall()
            return [InboxItem.model_validate_json(r[0]) for r in rows]

        return await self._db.read(read)

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r}, {self._session_id!r})"
