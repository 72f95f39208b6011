"""``SqliteStore``'s session-row statements: create a conversation once, check that it exists.

Both touch one row of ``glove_sessions`` through its primary key, so they cost the same with
ten sessions in the file or a million (a headless server calls them on every new session; it
used to count every message of every session instead). The SQL is kept as constants so a
test can check SQLite's query plan for them.
"""

from __future__ import annotations

import sqlite3

from glove_core.stores._sqlite_tables import now

__all__ = ["CREATE_SESSION_SQL", "SESSION_EXISTS_SQL", "create_session", "session_exists"]

CREATE_SESSION_SQL = (
    "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT (session_id) DO NOTHING"
)
"""Insert the session's row unless it exists (one primary-key lookup)."""

SESSION_EXISTS_SQL = "SELECT 1 FROM glove_sessions WHERE session_id = ?"
"""Whether the session's row exists (one primary-key lookup)."""


def create_session(conn: sqlite3.Connection, sid: str) -> bool:
    """Insert session ``sid`` (inside a write); True when this call created it.

    The database decides: of several connections (or processes) creating the same id at once,
    exactly one gets True.
    """
    stamp = now()
    return conn.execute(CREATE_SESSION_SQL, (sid, stamp, stamp)).rowcount == 1


def session_exists(conn: sqlite3.Connection, sid: str) -> bool:
    """Whether session ``sid`` has a row in the file."""
    return conn.execute(SESSION_EXISTS_SQL, (sid,)).fetchone() is not None
