"""The tables of ``SqliteStore`` files and the row helpers its writes share (internal).

The migrations are registered with the SQLite layer (``glove_core.sqlite``) as component
``glove_core.conversations``; the layer records their version in ``glove_store_schema``.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from glove_core.sqlite import SqliteSchema
from glove_core.types import InboxItem

__all__ = ["STORE_SCHEMA", "now", "save_item", "touch"]

STORE_SCHEMA = SqliteSchema(
    name="glove_core.conversations",
    # Each entry migrates the tables from version N to N + 1. Append; never edit a released one.
    migrations=(
        (
            """CREATE TABLE glove_sessions (
            session_id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            turns INTEGER NOT NULL DEFAULT 0,
            tasks TEXT NOT NULL DEFAULT '[]'
        )""",
            """CREATE TABLE glove_messages (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sender TEXT NOT NULL,
            is_compaction INTEGER NOT NULL,
            data TEXT NOT NULL
        )""",
            "CREATE INDEX glove_messages_by_session ON glove_messages (session_id, seq)",
            """CREATE TABLE glove_permissions (
            session_id TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            input_key TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, tool_name, input_key)
        )""",
            """CREATE TABLE glove_inbox (
            session_id TEXT NOT NULL,
            item_id TEXT NOT NULL,
            data TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, item_id)
        )""",
            "CREATE INDEX glove_inbox_by_item ON glove_inbox (item_id)",
        ),
        # 2: the newest compaction of a conversation in one index lookup, so a request reads
        # from the last compaction on (``get_messages_since_compaction``) without a scan.
        (
            "CREATE INDEX glove_messages_compactions ON glove_messages "
            "(session_id, is_compaction, seq)",
        ),
    ),
)
"""The conversation store's tables: sessions and their counters, messages, permissions, inbox."""


def now() -> str:
    """The current time, ISO 8601 in UTC."""
    return datetime.now(UTC).isoformat()


def touch(conn: sqlite3.Connection, sid: str) -> None:
    """Create the session's row, or stamp its ``updated_at`` (inside a write)."""
    stamp = now()
    conn.execute(
        "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at",
        (sid, stamp, stamp),
    )


def save_item(conn: sqlite3.Connection, sid: str, item: InboxItem) -> None:
    """Overwrite an existing inbox item of session ``sid`` (inside a write)."""
    touch(conn, sid)
    conn.execute(
        "UPDATE glove_inbox SET data = ?, status = ? WHERE session_id = ? AND item_id = ?",
        (item.model_dump_json(), item.status, sid, item.id),
    )
