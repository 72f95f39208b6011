"""``SqliteStore``'s helpers for other processes: list conversations, resolve inbox items.

They act on an existing file only (a typo'd path stays an error) through a short-lived
connection of the SQLite layer, and block: the async variants on ``SqliteStore`` run them in a
worker thread.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from glove_core.errors import InboxItemError
from glove_core.sqlite import SqliteDatabase
from glove_core.stores._sqlite_tables import STORE_SCHEMA, now, save_item
from glove_core.types import InboxItem, Message

__all__ = ["SessionInfo", "list_sessions", "resolve_inbox_item"]

_T = TypeVar("_T")


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
    first_message: str | None = None
    """The text of its first user message (None when it has none), e.g. to title it."""


def _on_existing_file(
    path: str | os.PathLike[str], fn: Callable[[sqlite3.Connection], _T], *, write: bool
) -> _T:
    db = SqliteDatabase(path, STORE_SCHEMA, create=False)
    try:
        return db.write_sync(fn) if write else db.read_sync(fn)
    finally:
        db.close_sync()


def list_sessions(path: str | os.PathLike[str]) -> list[SessionInfo]:
    """The conversations in a store file, oldest first (``SqliteStore.list_sessions_sync``)."""

    def read(conn: sqlite3.Connection) -> list[SessionInfo]:
        rows = conn.execute(
            "SELECT s.session_id, s.created_at, s.updated_at, "
            "(SELECT COUNT(*) FROM glove_messages m WHERE m.session_id = s.session_id), "
            "(SELECT m.data FROM glove_messages m WHERE m.session_id = s.session_id "
            "AND m.sender = 'user' ORDER BY m.seq LIMIT 1) "
            "FROM glove_sessions s ORDER BY s.created_at, s.session_id"
        ).fetchall()
        return [SessionInfo(r[0], r[1], r[2], int(r[3]), _text(r[4])) for r in rows]

    return _on_existing_file(path, read, write=False)


def _text(data: str | None) -> str | None:
    if data is None:
        return None
    try:
        return Message.model_validate_json(data).text
    except ValueError:  # a row this version cannot read: list the conversation untitled
        return None


def resolve_inbox_item(
    path: str | os.PathLike[str], item_id: str, response: str, session_id: str | None
) -> InboxItem:
    """Resolve a pending item (``SqliteStore.resolve_inbox_item_sync``)."""

    def write(conn: sqlite3.Connection) -> InboxItem:
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
                f"is already {item.status} (resolved at {item.resolved_at}); nothing was changed",
            )
        item = item.model_copy(
            update={"status": "resolved", "response": response, "resolved_at": now()}
        )
        save_item(conn, sid, item)
        return item

    return _on_existing_file(path, write, write=True)
