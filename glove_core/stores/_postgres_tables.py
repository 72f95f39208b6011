"""The tables of ``PostgresStore`` (internal): component ``glove_core.conversations`` of the
PostgreSQL layer, the same tables and columns as the SQLite store's, in PostgreSQL's types."""

from __future__ import annotations

from glove_core.postgres import Connection, PostgresSchema
from glove_core.stores._sqlite_tables import now

__all__ = ["STORE_SCHEMA", "touch"]

STORE_SCHEMA = PostgresSchema(
    name="glove_core.conversations",
    # Each entry migrates the tables from version N to N + 1. Append; never edit a released one.
    migrations=(
        (
            """CREATE TABLE glove_sessions (
            session_id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            input_tokens BIGINT NOT NULL DEFAULT 0,
            output_tokens BIGINT NOT NULL DEFAULT 0,
            cache_read_tokens BIGINT NOT NULL DEFAULT 0,
            cache_write_tokens BIGINT NOT NULL DEFAULT 0,
            turns BIGINT NOT NULL DEFAULT 0,
            tasks TEXT NOT NULL DEFAULT '[]'
        )""",
            """CREATE TABLE glove_messages (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sender TEXT NOT NULL,
            is_compaction BOOLEAN NOT NULL,
            data TEXT NOT NULL
        )""",
            "CREATE INDEX glove_messages_by_session ON glove_messages (session_id, seq)",
            """CREATE INDEX glove_messages_compactions ON glove_messages (session_id, seq)
            WHERE is_compaction""",
            """CREATE TABLE glove_permissions (
            session_id TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            input_key TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, tool_name, input_key)
        )""",
            """CREATE TABLE glove_inbox (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            session_id TEXT NOT NULL,
            item_id TEXT NOT NULL,
            data TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, item_id)
        )""",
            "CREATE INDEX glove_inbox_by_item ON glove_inbox (item_id)",
        ),
    ),
)
"""The conversation store's tables: sessions and their counters, messages, permissions, inbox."""


async def touch(conn: Connection, sid: str) -> None:
    """Create the session's row, or stamp its ``updated_at`` (inside a write)."""
    stamp = now()
    await conn.execute(
        "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (%s, %s, %s) "
        "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at",
        (sid, stamp, stamp),
    )
