"""The headless server's sessions in PostgreSQL, for several server instances (internal).

``PostgresSessionStorage`` is the ``SessionStorage`` of ``HeadlessServer(database_url=)``: one
``PostgresDatabase`` (pool, turn-lock connections, one LISTEN connection) for the instance,
a ``PostgresStore`` per session on it. Claiming an id is one primary-key insert that the
database decides, so of instances creating one id at once exactly one wins; any instance
finds any session.
"""

from __future__ import annotations

from typing import Any

from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema
from glove_core.stores.postgres import SAVES_CHANNEL, PostgresStore, deleted_payload
from glove_mcp.server._session_owners import (
    COUNT_SQL,
    COUNT_UP_SQL,
    OWNER_SQL,
    OWNERS_MIGRATIONS,
    PENDING_SQL,
    SessionLimitError,
    now,
)
from glove_mcp.server._session_rows import SessionRow, list_query, session_rows
from glove_mcp.server.principals import DEFAULT_PRINCIPAL

__all__ = ["PostgresSessionStorage"]

OWNERS_POSTGRES = PostgresSchema(name="glove_mcp.session_owners", migrations=OWNERS_MIGRATIONS)
"""The owners table in PostgreSQL."""


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
        await self._migrate()

    async def _migrate(self) -> None:
        # The conversations' tables first: the owners' migration reads them.
        await self.database.migrate(PostgresStore.schema)
        await self.database.migrate(OWNERS_POSTGRES)

    async def claim(
        self, session_id: str, owner: str, limit: int | None = None
    ) -> PostgresStore | None:
        """See ``SessionStorage.claim``: the conversation's row and its owner's, in one
        transaction; of instances creating one id at once exactly one wins."""

        async def write(conn: Connection) -> bool:
            if limit is not None:
                # One claim per principal at a time across instances, so the count holds.
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    ("glove_session_owners:" + owner,),
                )
                cursor = await conn.execute(COUNT_SQL, (owner,))
                row: Any = await cursor.fetchone()
                if row is not None and row[0] >= limit:
                    cursor = await conn.execute(
                        "SELECT 1 FROM glove_sessions WHERE session_id = %s", (session_id,)
                    )
                    if await cursor.fetchone() is None:  # a taken id stays a 409
                        raise SessionLimitError(owner, limit)
            stamp = now()
            cursor = await conn.execute(
                "INSERT INTO glove_sessions (session_id, created_at, updated_at) "
                "VALUES (%s, %s, %s) ON CONFLICT (session_id) DO NOTHING",
                (session_id, stamp, stamp),
            )
            if cursor.rowcount != 1:
                return False
            await conn.execute(
                "INSERT INTO glove_session_owners (session_id, principal) VALUES (%s, %s) "
                "ON CONFLICT (session_id) DO UPDATE SET principal = excluded.principal",
                (session_id, owner),
            )
            await conn.execute(COUNT_UP_SQL, (owner,))
            return True

        await self._migrate()
        created: bool = await self.database.write(write)
        return PostgresStore(self.database, session_id) if created else None

    async def owner(self, session_id: str) -> str | None:
        """See ``SessionStorage.owner`` (one primary-key lookup)."""

        async def read(conn: Connection) -> str | None:
            cursor = await conn.execute(
                OWNER_SQL.replace("?", "%s"), (DEFAULT_PRINCIPAL, session_id)
            )
            row: Any = await cursor.fetchone()
            return None if row is None else str(row[0])

        await self._migrate()
        found: str | None = await self.database.read(read)
        return found

    async def find(self, session_id: str) -> PostgresStore | None:
        """See ``SessionStorage.find``."""
        store = PostgresStore(self.database, session_id)
        return store if await store.session_exists() else None

    async def find_owned(self, session_id: str) -> tuple[str, PostgresStore] | None:
        """See ``SessionStorage.find_owned``: the owner's lookup finds only an existing
        session's row, so it is the existence check too (one round trip)."""
        owner = await self.owner(session_id)
        return None if owner is None else (owner, PostgresStore(self.database, session_id))

    async def list_page(
        self, after: str | None, limit: int, owner: str | None = None
    ) -> list[SessionRow]:
        """See ``SessionStorage.list_page``: one range scan of the sessions' primary key (or
        of the owners' index, for one principal's)."""
        statement, params = list_query("%s", after, limit, owner)

        async def read(conn: Connection) -> list[SessionRow]:
            cursor = await conn.execute(statement, params)
            rows: list[Any] = await cursor.fetchall()
            return session_rows(rows)

        rows: list[SessionRow] = await self.database.read(read)
        return rows

    async def delete(self, session_id: str) -> bool:
        """Delete every row kept under ``session_id`` (its conversation, permissions, inbox,
        queued events, active MCP servers: each table of the schema with a ``session_id`` or
        ``conversation_id`` column) in one transaction; False when it did not exist. The
        server has closed the session first."""

        async def write(conn: Connection) -> bool:
            # Counted off its owner before the owner's row goes with the rest.
            await conn.execute(
                "UPDATE glove_principal_sessions SET sessions = sessions - 1 "
                "WHERE sessions > 0 AND principal = "
                "(SELECT principal FROM glove_session_owners WHERE session_id = %s)",
                (session_id,),
            )
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

        await self._migrate()
        deleted: bool = await self.database.write(write)
        return deleted

    async def pending_events(self) -> int:
        """See ``SessionStorage.pending_events``."""

        async def read(conn: Connection) -> int:
            cursor = await conn.execute("SELECT to_regclass('glove_events') IS NOT NULL")
            row: Any = await cursor.fetchone()
            if not row[0]:
                return 0
            cursor = await conn.execute(PENDING_SQL)
            row = await cursor.fetchone()
            return int(row[0])

        count: int = await self.database.read(read)
        return count

    async def aclose(self) -> None:
        """Close the database's connections."""
        await self.database.aclose()

    def __repr__(self) -> str:
        return f"PostgresSessionStorage({self.database.name!r})"
