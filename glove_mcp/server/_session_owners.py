"""Which principal owns each of the headless server's sessions (internal).

Table ``glove_session_owners`` (component ``glove_mcp.session_owners``, in SQLite and in
PostgreSQL) maps a session id to its principal, with an index by principal so a principal's
page of sessions is one range scan of its own rows. Migration 1 gives every session that
exists already to principal ``default`` (the ``GLOVE_API_KEY`` principal that created it); a
session with no row (made outside the server on the same database) is ``default``'s too.

Table ``glove_principal_sessions`` counts each principal's sessions (kept in the same
transactions), so the cap on sessions per principal costs one key lookup.

A session is created with its owner in one transaction (the conversation's row, the owner's
and the count), so no request ever sees it without one. The table has a ``session_id`` column, so
deleting a session deletes its owner row with everything else kept under its id.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from glove_core.sqlite import SqliteSchema
from glove_mcp.server.principals import DEFAULT_PRINCIPAL

__all__ = [
    "COUNT_DOWN_SQL",
    "COUNT_SQL",
    "COUNT_UP_SQL",
    "OWNERS_MIGRATIONS",
    "OWNERS_SQLITE",
    "OWNER_SQL",
    "PENDING_SQL",
    "SessionLimitError",
    "claim_sqlite",
    "forget_sqlite",
    "now",
    "owner_sqlite",
    "pending_sqlite",
]

_CREATE = (
    "CREATE TABLE glove_session_owners (session_id TEXT PRIMARY KEY, principal TEXT NOT NULL)",
    "CREATE INDEX glove_session_owners_by_principal "
    "ON glove_session_owners (principal, session_id)",
    "INSERT INTO glove_session_owners (session_id, principal) "
    f"SELECT session_id, '{DEFAULT_PRINCIPAL}' FROM glove_sessions",
    # Each principal's number of sessions, kept with each creation and deletion, so checking
    # the cap costs one key lookup however many sessions the principal has.
    "CREATE TABLE glove_principal_sessions (principal TEXT PRIMARY KEY, sessions BIGINT NOT NULL)",
    "INSERT INTO glove_principal_sessions (principal, sessions) "
    f"SELECT '{DEFAULT_PRINCIPAL}', COUNT(*) FROM glove_sessions HAVING COUNT(*) > 0",
)

OWNERS_MIGRATIONS = (_CREATE,)
"""The owners tables' numbered migrations, the same on SQLite and PostgreSQL (the PostgreSQL
schema is built where the driver is loaded: ``_postgres_sessions``)."""

OWNERS_SQLITE = SqliteSchema(
    name="glove_mcp.session_owners",
    # Each entry migrates the tables from version N to N + 1. Append; never edit a released one.
    # The conversation store's tables exist first (the storage opens them before this).
    migrations=OWNERS_MIGRATIONS,
)
"""The owners table in a SQLite file."""


OWNER_SQL = (
    "SELECT COALESCE(o.principal, ?) FROM glove_sessions s "
    "LEFT JOIN glove_session_owners o ON o.session_id = s.session_id WHERE s.session_id = ?"
)


def now() -> str:
    """The current time as the conversation tables keep it: ISO 8601 in UTC."""
    return datetime.now(UTC).isoformat()


COUNT_SQL = "SELECT sessions FROM glove_principal_sessions WHERE principal = %s"
"""How many sessions a principal has (one key lookup)."""

COUNT_UP_SQL = (
    "INSERT INTO glove_principal_sessions (principal, sessions) VALUES (%s, 1) "
    "ON CONFLICT (principal) DO UPDATE SET sessions = glove_principal_sessions.sessions + 1"
)
"""One more session of a principal."""

COUNT_DOWN_SQL = (
    "UPDATE glove_principal_sessions SET sessions = sessions - 1 "
    "WHERE principal = %s AND sessions > 0"
)
"""One session fewer."""


class SessionLimitError(Exception):
    """The principal has as many sessions as it may (the server answers 429)."""

    def __init__(self, principal: str, limit: int) -> None:
        super().__init__(
            f"principal {principal!r} has {limit} sessions, the most it may have: delete one first"
        )
        self.limit = limit


def claim_sqlite(
    conn: sqlite3.Connection, session_id: str, principal: str, stamp: str, limit: int | None
) -> bool:
    """Create session ``session_id`` owned by ``principal`` (inside a write); False when the
    id exists.

    Raises:
        SessionLimitError: the principal has ``limit`` sessions already.
    """
    if limit is not None:
        row = conn.execute(COUNT_SQL.replace("%s", "?"), (principal,)).fetchone()
        if row is not None and row[0] >= limit:
            exists = conn.execute(
                "SELECT 1 FROM glove_sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if exists is None:  # a taken id stays a 409, whoever's it is
                raise SessionLimitError(principal, limit)
    created = conn.execute(
        "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (session_id) DO NOTHING",
        (session_id, stamp, stamp),
    ).rowcount
    if created != 1:
        return False
    conn.execute(
        "INSERT INTO glove_session_owners (session_id, principal) VALUES (?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET principal = excluded.principal",
        (session_id, principal),
    )
    conn.execute(COUNT_UP_SQL.replace("%s", "?"), (principal,))
    return True


def forget_sqlite(conn: sqlite3.Connection, session_id: str) -> None:
    """Count a session being deleted off its owner (inside the deleting write)."""
    row = conn.execute(
        "SELECT principal FROM glove_session_owners WHERE session_id = ?", (session_id,)
    ).fetchone()
    if row is not None:
        conn.execute(COUNT_DOWN_SQL.replace("%s", "?"), (row[0],))


def owner_sqlite(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The owner of ``session_id``, or None when there is no such session."""
    row = conn.execute(OWNER_SQL, (DEFAULT_PRINCIPAL, session_id)).fetchone()
    return None if row is None else str(row[0])


PENDING_SQL = "SELECT COUNT(*) FROM glove_events WHERE status = 'pending'"
"""Outside events waiting, every session together (``PendingEvents``)."""


def pending_sqlite(conn: sqlite3.Connection) -> int:
    """How many outside events wait in the file (0 without an events table)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'glove_events'"
    ).fetchone()
    if exists is None:
        return 0
    return int(conn.execute(PENDING_SQL).fetchone()[0])
