"""The headless server's sessions in PostgreSQL, for several server instances (internal).

``PostgresSessionStorage`` is the ``SessionStorage`` of ``HeadlessServer(database_url=)``: one
``PostgresDatabase`` (pool, turn-lock connections, one LISTEN connection) for the instance,
a ``PostgresStore`` per session on it. Claiming an id is one primary-key insert that the
database decides, so of instances creating one id at once exactly one wins; any instance
finds any session.
"""

from __future__ import annotations

from typing import Any

from glove_core.postgres import Connection, PostgresDatabase
from glove_core.stores.postgres import SAVES_CHANNEL, PostgresStore, deleted_payload
from glove_mcp.server._session_rows import SessionRow, title_of

__all__ = ["PostgresSessionStorage"]


class PostgresSessionStorage:
    """Sessions as ``PostgresStore`` conversations of one database (owned by the server).

    Args:
        database: the instance's database; ``aclose`` closes it.
    """

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database

    async def open(self) -> None:
        """Reach the database and migrate the conversation tables (start-up check).

        Raises:
            StoreError: the database cannot be reached.
            StoreVersionError: the database has newer tables than this glove reads.
        """
        await self.database.open()
        await self.database.migrate(PostgresStore.schema)

    async def claim(self, session_id: str) -> PostgresStore | None:
        """See ``SessionStorage.claim``."""
        store = PostgresStore(self.database, session_id)
        return store if await store.create_session() else None

    async def find(self, session_id: str) -> PostgresStore | None:
        """See ``SessionStorage.find``."""
        store = PostgresStore(self.database, session_id)
        return store if await store.session_exists() else None

    async def list_page(self, after: str | None, limit: int) -> list[SessionRow]:
        """See ``SessionStorage.list_page``: one range scan of the sessions' primary key."""

        async def read(conn: Connection) -> list[SessionRow]:
            cursor = await conn.execute(
                "SELECT s.session_id, s.created_at, s.updated_at, "
                "(SELECT COUNT(*) FROM glove_messages m WHERE m.session_id = s.session_id), "
                # The title: the first message a person sent (no tool results, nothing the
                # framework wrote), found along the (session_id, seq) index.
                "(SELECT m.data::jsonb ->> 'text' FROM glove_messages m "
                "WHERE m.session_id = s.session_id AND m.sender = 'user' "
                "AND NOT m.is_compaction AND m.data::jsonb ->> 'tool_results' IS NULL "
                "AND m.data::jsonb ->> 'framework_context' IS NULL "
                "AND m.data::jsonb ->> 'text' <> '' ORDER BY m.seq LIMIT 1) "
                "FROM glove_sessions s WHERE s.session_id > %s ORDER BY s.session_id LIMIT %s",
                (after or "", limit),
            )
            rows: list[Any] = await cursor.fetchall()
            return [SessionRow(r[0], r[1], r[2], int(r[3]), title_of(r[4])) for r in rows]

        rows: list[SessionRow] = await self.database.read(read)
        return rows

    async def delete(self, session_id: str) -> bool:
        """Delete every row kept under ``session_id`` (its conversation, permissions, inbox,
        queued events, active MCP servers: each table of the schema with a ``session_id`` or
        ``conversation_id`` column) in one transaction; False when it did not exist. The
        server has closed the session first."""

        async def write(conn: Connection) -> bool:
            cursor = await conn.execute(
                "DELETE FROM glove_sessions WHERE session_id = %s", (session_id,)
            )
            existed = cursor.rowcount == 1
            tables = await conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name LIKE 'glove%' "
                "AND column_name IN ('session_id', 'conversation_id') "
                "AND table_name <> 'glove_sessions'"
            )
            rows: list[Any] = await tables.fetchall()
            for table, column in rows:
                await conn.execute(
                    f'DELETE FROM "{table}" WHERE "{column}" = %s',  # names from the catalog
                    (session_id,),
                )
            if existed:  # followers on other instances wake, find it gone, and end
                await self.database.notify(conn, SAVES_CHANNEL, deleted_payload(session_id))
            return existed

        await self.database.migrate(PostgresStore.schema)
        deleted: bool = await self.database.write(write)
        return deleted

    async def aclose(self) -> None:
        """Close the database's connections."""
        await self.database.aclose()

    def __repr__(self) -> str:
        return f"PostgresSessionStorage({self.database.name!r})"
