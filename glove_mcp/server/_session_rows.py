"""The server's sessions in its SQLite file: a page of them, and deleting one (internal).

``SqliteSessionStorage`` uses these for ``GET /sessions`` and ``DELETE /sessions/{id}``. A page
is one range scan of the sessions' primary key from a cursor, so its cost follows the page
size, not the number of sessions. Deleting removes, in one transaction, every row the file
keeps under the session's id: each table with a ``session_id`` column (the conversation, its
permissions and inbox, queued outside events) or a ``conversation_id`` column (the MCP
adapter's active servers) — so a component that adds a table keyed that way is covered
without this module knowing it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from glove_core.sqlite import SqliteDatabase
from glove_core.stores.sqlite import SqliteStore

__all__ = [
    "TITLE_CHARS",
    "SessionRow",
    "delete_rows",
    "delete_session",
    "list_sessions",
    "title_of",
]

_KEYS = ("session_id", "conversation_id")


@dataclass(frozen=True)
class SessionRow:
    """One session as ``GET /sessions`` lists it."""

    id: str
    created_at: str
    """ISO 8601, UTC."""
    updated_at: str
    """When it last saved something (ISO 8601, UTC)."""
    messages: int
    """How many messages it saved."""
    owner: str = "default"
    """The principal it belongs to."""
    title: str | None = None
    """The start of the first message a person sent (one line, at most ``TITLE_CHARS``);
    None before there is one."""


TITLE_CHARS = 80
"""A session's title is cut to this many characters (an ellipsis marks the cut)."""


def title_of(text: str | None) -> str | None:
    """A session's title from its first message's text: whitespace folded, cut to
    ``TITLE_CHARS``; None for no text."""
    folded = " ".join((text or "").split())
    if not folded:
        return None
    if len(folded) > TITLE_CHARS:
        return folded[: TITLE_CHARS - 1].rstrip() + "…"
    return folded


def _database(path: str) -> SqliteDatabase:
    # check_pages=False: the server checked the file when its first session opened.
    return SqliteDatabase(path, SqliteStore.schema, check_pages=False)


_COUNT = "(SELECT COUNT(*) FROM glove_messages m WHERE m.session_id = s.session_id)"

# The title: the first message a person sent (no tool results, nothing the framework wrote),
# found along the (session_id, seq) index. JSON is read differently by each database.
_TITLE_SQLITE = (
    "(SELECT json_extract(m.data, '$.text') FROM glove_messages m "
    "WHERE m.session_id = s.session_id AND m.sender = 'user' AND NOT m.is_compaction "
    "AND json_extract(m.data, '$.tool_results') IS NULL "
    "AND json_extract(m.data, '$.framework_context') IS NULL "
    "AND json_extract(m.data, '$.text') != '' ORDER BY m.seq LIMIT 1)"
)
_TITLE_POSTGRES = (
    "(SELECT m.data::jsonb ->> 'text' FROM glove_messages m "
    "WHERE m.session_id = s.session_id AND m.sender = 'user' "
    "AND NOT m.is_compaction AND m.data::jsonb ->> 'tool_results' IS NULL "
    "AND m.data::jsonb ->> 'framework_context' IS NULL "
    "AND m.data::jsonb ->> 'text' <> '' ORDER BY m.seq LIMIT 1)"
)

LIST_ALL_SQL = (
    f"SELECT s.session_id, s.created_at, s.updated_at, {_COUNT}, "
    "COALESCE(o.principal, 'default'), {title} FROM glove_sessions s "
    "LEFT JOIN glove_session_owners o ON o.session_id = s.session_id "
    "WHERE s.session_id > {p} ORDER BY s.session_id LIMIT {p}"
)
"""A page of every session (an admin's list): one range scan of the sessions' key."""

LIST_OWN_SQL = (
    f"SELECT s.session_id, s.created_at, s.updated_at, {_COUNT}, o.principal, {{title}} "
    "FROM glove_session_owners o JOIN glove_sessions s ON s.session_id = o.session_id "
    "WHERE o.principal = {p} AND o.session_id > {p} ORDER BY o.session_id LIMIT {p}"
)
"""A page of one principal's sessions: one range scan of the owners' index."""


def list_query(
    placeholder: str, after: str | None, limit: int, owner: str | None
) -> tuple[str, tuple[object, ...]]:
    """The statement and parameters of a page (``owner`` None: every session); ``?`` is
    SQLite's placeholder, ``%s`` PostgreSQL's."""
    title = _TITLE_SQLITE if placeholder == "?" else _TITLE_POSTGRES
    if owner is None:
        return LIST_ALL_SQL.format(p=placeholder, title=title), (after or "", limit)
    return LIST_OWN_SQL.format(p=placeholder, title=title), (owner, after or "", limit)


def session_rows(rows: list[tuple[object, ...]]) -> list[SessionRow]:
    """``SessionRow``s of a page's rows."""
    return [
        SessionRow(
            str(r[0]),
            str(r[1]),
            str(r[2]),
            int(str(r[3])),
            owner=str(r[4]),
            title=title_of(None if r[5] is None else str(r[5])),
        )
        for r in rows
    ]


def list_sessions(
    conn: sqlite3.Connection, *, after: str | None, limit: int, owner: str | None
) -> list[SessionRow]:
    """Up to ``limit`` sessions whose ids sort after ``after`` (None: from the first), in id
    order; only ``owner``'s unless it is None."""
    statement, params = list_query("?", after, limit, owner)
    return session_rows(conn.execute(statement, params).fetchall())


def delete_rows(conn: sqlite3.Connection, session_id: str) -> bool:
    """Delete every row of ``session_id`` (inside a write); False when it did not exist."""
    existed = (
        conn.execute("SELECT 1 FROM glove_sessions WHERE session_id = ?", (session_id,)).fetchone()
        is not None
    )
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        columns = {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
        for key in _KEYS:
            if key in columns:
                conn.execute(f'DELETE FROM "{table}" WHERE "{key}" = ?', (session_id,))
    return existed


async def delete_session(path: str, session_id: str) -> bool:
    """Delete every row of ``session_id`` in one transaction; False when it did not exist."""
    db = _database(path)
    try:
        return await db.write(lambda conn: delete_rows(conn, session_id))
    finally:
        await db.aclose()
