"""The headless server's sessions in PostgreSQL, for several server instances (internal).

``PostgresSessionStorage`` is the ``SessionStorage`` of ``HeadlessServer(database_url=)``: one
``PostgresDatabase`` (pool, turn-lock connections, one LISTEN connection) for the instance,
a ``PostgresStore`` per session on it. Claiming an id is one primary-key insert that the
database decides, so of instances creating one id at once exactly one wins; any instance
finds any session.
"""

from __future__ import annotations

from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore

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

    async def aclose(self) -> None:
        """Close the database's connections."""
        await self.database.aclose()

    def __repr__(self) -> str:
        return f"PostgresSessionStorage({self.database.name!r})"
