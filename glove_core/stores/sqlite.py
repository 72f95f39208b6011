"""SqliteStore: conversations in a SQLite file that survive restarts and crashes.

One file holds any number of conversations (sessions). Several ``SqliteStore`` objects, in one
process or several, may use the same file at once: the file runs in WAL mode (readers never wait
for the writer), every write is one ``BEGIN IMMEDIATE`` transaction, and a busy timeout makes a
writer wait for another instead of failing.

Each store object keeps one connection, opened lazily on first use and used from worker threads
(``asyncio.to_thread``) under a lock, so no sqlite3 call runs on the event loop. A connection
per call would add the cost of opening and checking the file (about 1 ms, twice an append) to
every call (see ``bench/store.py``).

Messages are stored as their pydantic JSON (``Message.model_dump_json``), so every field —
``is_compaction``, ``framework_context``, content parts, tool calls and results — comes back
exactly as it was saved. The schema is versioned (table ``glove_store_schema``) and migrated
forward on open; a file of a newer version, or one that is not a SQLite database, raises and is
left untouched.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from glove_core.errors import (
    GloveStateError,
    InboxItemError,
    StoreCorruptError,
)
from glove_core.stores._sqlite_schema import (
    DEFAULT_BUSY_TIMEOUT,
    SCHEMA_VERSION,
    connect,
    now,
    transaction,
    translate,
    with_existing_file,
)
from glove_core.stores.base import InboxStatus, PermissionStatus, inbox_changes
from glove_core.types import InboxItem, Message, Task, Usage

__all__ = ["SCHEMA_VERSION", "SessionInfo", "SqliteStore"]

_T = TypeVar("_T")

_TASKS = TypeAdapter(list[Task])


@dataclass(frozen=True)
class SessionInfo:
    """One conversation in a SQLite store file, as listed by ``SqliteStore.list_sessions``."""

    session_id: str
    """The conversation's id (``SqliteStore(path, session_id)``)."""
    created_at: str
    """When the conversation first wrote to the file (ISO 8601, UTC)."""
    updated_at: str
    """When it last wrote to the file (ISO 8601, UTC)."""
    message_count: int
    """How many messages it saved (summaries included; compaction hides none)."""


class SqliteStore:
    """A conversation kept in a SQLite file, with every optional capability.

    Implements ``StoreAdapter`` and the task, permission and inbox capabilities. Use it as an
    async context manager, or call ``aclose()`` when done; the file is created (and its schema
    migrated) by the first call that needs it.

    Args:
        path: the database file; created when missing. May be shared with other stores,
            sessions and processes.
        session_id: the conversation's id within the file.
        busy_timeout: seconds a write waits for another connection's write to finish before
            raising ``StoreError``.

    Raises:
        StoreCorruptError: (on first use) the file is not a SQLite database or is damaged.
        StoreVersionError: (on first use) the file has a newer schema than this glove reads.
        StoreError: (on any call) the file cannot be opened or written, e.g. it stayed locked
            longer than ``busy_timeout``.

    Example:
        >>> async with SqliteStore("chat.db", "session-1") as store:  # doctest: +SKIP
        ...     agent = Glove(model, "Be brief.", store=store).build()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        session_id: str,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must be 0 or more seconds, got {busy_timeout}")
        self._path = os.fspath(path)
        self._session_id = session_id
        self._busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def identifier(self) -> str:
        """The conversation's id (``session_id``)."""
        return self._session_id

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    async def open(self) -> SqliteStore:
        """Open the file now (otherwise the first call does), so a bad file fails early.

        Raises:
            StoreCorruptError: the file is not a SQLite database or is damaged.
            StoreVersionError: the file has a newer schema than this glove reads.
        """
        await self._call(lambda conn: None)
        return self

    async def aclose(self) -> None:
        """Close the connection. Idempotent; later calls raise ``GloveStateError``."""
        await asyncio.to_thread(self._close_sync)

    def _close_sync(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def __aenter__(self) -> SqliteStore:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        return await asyncio.to_thread(self._call_sync, fn)

    def _call_sync(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            if self._closed:
                raise GloveStateError(f"{self!r} is closed; create a new SqliteStore to use it")
            if self._conn is None:
                self._conn = connect(self._path, self._busy_timeout, create=True)
            try:
                return fn(self._conn)
            except sqlite3.Error as exc:
                raise translate(exc, self._path) from exc

    # -- messages and counters --------------------------------------------------------------

    async def get_messages(self) -> list[Message]:
        """Every saved message of the conversation, oldest first."""
        sid = self._session_id

        def read(conn: sqlite3.Connection) -> list[tuple[int, str]]:
            rows: list[tuple[int, str]] = conn.execute(
                "SELECT seq, data FROM glove_messages WHERE session_id = ? ORDER BY seq", (sid,)
            ).fetchall()
            return rows

        def load() -> list[Message]:
            # Parsed outside the lock, so other calls on this store need not wait for it.
            rows = self._call_sync(read)
            try:
                return [Message.model_validate_json(data) for _, data in rows]
            except ValidationError as exc:
                bad = next(seq for seq, data in rows if not _parses(data))
                raise StoreCorruptError(
                    self._path,
                    f"message row {bad} of conversation {sid!r} is not a valid message "
                    f"({exc.error_count()} error(s))",
                ) from exc

        return await asyncio.to_thread(load)

    async def append_messages(self, messages: list[Message]) -> None:
        """Save messages at the end of the conversation, in one transaction (all or none)."""
        if not messages:
            return
        sid = self._session_id
        rows = [(sid, m.id, m.sender, int(m.is_compaction), m.model_dump_json()) for m in messages]

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                _touch(conn, sid)
                conn.executemany(
                    "INSERT INTO glove_messages (session_id, message_id, sender, is_compaction, "
                    "data) VALUES (?, ?, ?, ?, ?)",
                    rows,
                )

        await self._call(write)

    async def get_usage(self) -> Usage:
        """Tokens used by this conversation so far."""
        row = await self._session_row(
            "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens"
        )
        if row is None:
            return Usage()
        return Usage(
            input_tokens=row[0],
            output_tokens=row[1],
            cache_read_tokens=row[2],
            cache_write_tokens=row[3],
        )

    async def add_usage(self, usage: Usage) -> None:
        """Add one model call's tokens to the total (atomic, also across processes)."""
        sid = self._session_id

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                _touch(conn, sid)
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

        await self._call(write)

    async def get_turn_count(self) -> int:
        """How many model calls this conversation made."""
        row = await self._session_row("turns")
        return 0 if row is None else int(row[0])

    async def increment_turn(self) -> None:
        """Count one more model call."""
        await self._update_session("turns = turns + 1", ())

    async def reset_counters(self) -> None:
        """Set the token and turn counters to zero."""
        await self._update_session(
            "input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, "
            "cache_write_tokens = 0, turns = 0",
            (),
        )

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

        return await self._call(read)

    async def set_permission(
        self, tool_name: str, input_key: str, status: PermissionStatus
    ) -> None:
        """Remember an answer for this tool and input."""
        if status not in ("granted", "denied"):
            raise ValueError(f"status must be 'granted' or 'denied', got {status!r}")
        sid = self._session_id

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                _touch(conn, sid)
                conn.execute(
                    "INSERT INTO glove_permissions (session_id, tool_name, input_key, status) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (session_id, tool_name, input_key) "
                    "DO UPDATE SET status = excluded.status",
                    (sid, tool_name, input_key, status),
                )

        await self._call(write)

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
            with transaction(conn):
                _touch(conn, sid)
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

        await self._call(write)

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
            with transaction(conn):
                row = conn.execute(
                    "SELECT data FROM glove_inbox WHERE session_id = ? AND item_id = ?",
                    (sid, item_id),
                ).fetchone()
                if row is None:
                    raise InboxItemError(item_id, f"no such item in conversation {sid!r}")
                item = InboxItem.model_validate_json(row[0]).model_copy(update=changes)
                _save_item(conn, sid, item)

        await self._call(write)

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

        def read(conn: sqlite3.Connection) -> list[SessionInfo]:
            rows = conn.execute(
                "SELECT s.session_id, s.created_at, s.updated_at, "
                "(SELECT COUNT(*) FROM glove_messages m WHERE m.session_id = s.session_id) "
                "FROM glove_sessions s ORDER BY s.created_at, s.session_id"
            ).fetchall()
            return [SessionInfo(r[0], r[1], r[2], int(r[3])) for r in rows]

        return with_existing_file(path, read)

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

        def write(conn: sqlite3.Connection) -> InboxItem:
            with transaction(conn):
                query = "SELECT session_id, data FROM glove_inbox WHERE item_id = ?"
                params: tuple[str, ...] = (item_id,)
                if session_id is not None:
                    query += " AND session_id = ?"
                    params = (item_id, session_id)
                rows = conn.execute(query, params).fetchall()
                where = f" in conversation {session_id!r}" if session_id is not None else ""
                if not rows:
                    raise InboxItemError(item_id, f"no such item{where} in {os.fspath(path)!r}")
                if len(rows) > 1:
                    sessions = ", ".join(repr(r[0]) for r in rows)
                    raise InboxItemError(
                        item_id, f"the id is used by conversations {sessions}; pass session_id="
                    )
                sid, data = rows[0]
                item = InboxItem.model_validate_json(data)
                if item.status != "pending":
                    raise InboxItemError(
                        item_id,
                        f"is already {item.status} (resolved at {item.resolved_at}); "
                        "nothing was changed",
                    )
                item = item.model_copy(
                    update={"status": "resolved", "response": response, "resolved_at": now()}
                )
                _save_item(conn, sid, item)
                return item

        return with_existing_file(path, write)

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

        return await self._call(read)

    async def _update_session(self, assignments: str, params: Sequence[object]) -> None:
        sid = self._session_id

        def write(conn: sqlite3.Connection) -> None:
            with transaction(conn):
                _touch(conn, sid)
                conn.execute(
                    f"UPDATE glove_sessions SET {assignments} WHERE session_id = ?",
                    (*params, sid),
                )

        await self._call(write)

    async def _inbox_where(self, condition: str) -> list[InboxItem]:
        sid = self._session_id

        def read(conn: sqlite3.Connection) -> list[InboxItem]:
            rows = conn.execute(
                f"SELECT data FROM glove_inbox WHERE session_id = ? {condition} ORDER BY rowid",
                (sid,),
            ).fetchall()
            return [InboxItem.model_validate_json(r[0]) for r in rows]

        return await self._call(read)

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r}, {self._session_id!r})"


# --- row helpers ---------------------------------------------------------------------------


def _parses(data: str) -> bool:
    try:
        Message.model_validate_json(data)
    except ValidationError:
        return False
    return True


def _touch(conn: sqlite3.Connection, sid: str) -> None:
    stamp = now()
    conn.execute(
        "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at",
        (sid, stamp, stamp),
    )


def _save_item(conn: sqlite3.Connection, sid: str, item: InboxItem) -> None:
    _touch(conn, sid)
    conn.execute(
        "UPDATE glove_inbox SET data = ?, status = ? WHERE session_id = ? AND item_id = ?",
        (item.model_dump_json(), item.status, sid, item.id),
    )
