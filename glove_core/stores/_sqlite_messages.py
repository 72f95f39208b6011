"""The message rows of ``SqliteStore`` files: reading them whole or from the last compaction
on, and writing them (internal).

Reading from the last compaction costs what the model sees, not what was ever said: the newest
compaction row is found through the ``(session_id, is_compaction, seq)`` index (migration 2 of
``glove_core.conversations``), then the rows from it on through ``(session_id, seq)``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from glove_core.stores._sqlite_tables import touch
from glove_core.types import Message

__all__ = [
    "WINDOW_SQL",
    "all_rows",
    "count_rows",
    "insert_messages",
    "rows_from",
    "rows_since_compaction",
]

Rows = list[tuple[int, str]]

WINDOW_SQL = (
    "SELECT seq, data FROM glove_messages WHERE session_id = ? AND seq >= COALESCE("
    "(SELECT MAX(seq) FROM glove_messages WHERE session_id = ? AND is_compaction = 1), 0) "
    "ORDER BY seq"
)
"""A session's rows from its newest compaction on: the compaction through the
``glove_messages_compactions`` index, then a range of ``glove_messages_by_session``. One
statement, so a compaction saved meanwhile cannot split it."""


def all_rows(sid: str) -> Callable[[sqlite3.Connection], Rows]:
    """A read of every message row of session ``sid``, oldest first."""

    def read(conn: sqlite3.Connection) -> Rows:
        rows: Rows = conn.execute(
            "SELECT seq, data FROM glove_messages WHERE session_id = ? ORDER BY seq", (sid,)
        ).fetchall()
        return rows

    return read


def rows_from(sid: str, start: int) -> Callable[[sqlite3.Connection], Rows]:
    """A read of session ``sid``'s rows from position ``start`` (0-based) on, oldest first."""

    def read(conn: sqlite3.Connection) -> Rows:
        rows: Rows = conn.execute(
            "SELECT seq, data FROM glove_messages WHERE session_id = ? ORDER BY seq "
            "LIMIT -1 OFFSET ?",
            (sid, start),
        ).fetchall()
        return rows

    return read


def count_rows(sid: str) -> Callable[[sqlite3.Connection], int]:
    """A count of session ``sid``'s message rows."""

    def read(conn: sqlite3.Connection) -> int:
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM glove_messages WHERE session_id = ?", (sid,)
        ).fetchone()
        return int(count)

    return read


def rows_since_compaction(sid: str) -> Callable[[sqlite3.Connection], Rows]:
    """A read of session ``sid``'s rows from its newest compaction on (inclusive), oldest
    first; every row when it has none."""

    def read(conn: sqlite3.Connection) -> Rows:
        rows: Rows = conn.execute(WINDOW_SQL, (sid, sid)).fetchall()
        return rows

    return read


def insert_messages(sid: str, messages: Sequence[Message]) -> Callable[[sqlite3.Connection], None]:
    """A write appending ``messages`` to session ``sid`` (one transaction: all or none)."""
    rows = [(sid, m.id, m.sender, int(m.is_compaction), m.model_dump_json()) for m in messages]

    def write(conn: sqlite3.Connection) -> None:
        touch(conn, sid)
        conn.executemany(
            "INSERT INTO glove_messages (session_id, message_id, sender, is_compaction, "
            "data) VALUES (?, ?, ?, ?, ?)",
            rows,
        )

    return write
