"""Run one test against both databases: the ``backend`` fixture (SQLite file, PostgreSQL).

A test written against ``backend`` gets stores, event queues and MCP adapters from it and runs
twice, once on a SQLite file in ``tmp_path`` and once on a fresh PostgreSQL database (see
``tests._postgres``), so the two implementations are held to the same tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest

from glove_core import SqliteStore
from glove_core.event_queue import SqliteEventQueue
from glove_mcp import SqliteMcpAdapter
from glove_mcp.adapter import TokenMap

__all__ = ["Backend", "backend", "store_at"]


class Backend:
    """Makes the store objects of one database; closes them all at the end of the test."""

    def __init__(self, kind: Literal["sqlite", "postgres"], where: str) -> None:
        self.kind = kind
        self.where = where
        """The SQLite file, or the PostgreSQL URL."""
        self._opened: list[Any] = []
        self._databases: list[Any] = []

    async def _database(self, fresh: bool) -> Any:
        from glove_core.postgres import PostgresDatabase

        if fresh or not self._databases:
            self._databases.append(await PostgresDatabase(self.where).open())
        return self._databases[-1]

    async def store(self, session_id: str, *, fresh: bool = False, **options: Any) -> Any:
        """A conversation store; ``fresh`` uses a connection of its own (a restart)."""
        if self.kind == "sqlite":
            return self._keep(await SqliteStore(self.where, session_id, **options).open())
        from glove_core.stores.postgres import PostgresStore

        db = await self._database(fresh)
        return self._keep(await PostgresStore(db, session_id, **options).open())

    async def queue(self, session_id: str, *, fresh: bool = False) -> Any:
        """An event queue of the conversation."""
        if self.kind == "sqlite":
            return self._keep(await SqliteEventQueue(self.where, session_id).open())
        from glove_core.event_queue_postgres import PostgresEventQueue

        db = await self._database(fresh)
        return self._keep(await PostgresEventQueue(db, session_id).open())

    async def adapter(
        self, conversation_id: str, tokens: TokenMap | None = None, *, fresh: bool = False
    ) -> Any:
        """An MCP adapter of the conversation."""
        if self.kind == "sqlite":
            return self._keep(await SqliteMcpAdapter(self.where, conversation_id, tokens).open())
        from glove_mcp.adapter_postgres import PostgresMcpAdapter

        db = await self._database(fresh)
        return self._keep(await PostgresMcpAdapter(db, conversation_id, tokens).open())

    async def oauth_store(self, path: str) -> Any:
        """An OAuth store: the JSON file ``path`` (SQLite backend), or the database's table."""
        if self.kind == "sqlite":
            from glove_mcp.oauth import FsOAuthStore

            return FsOAuthStore(path)
        from glove_mcp.oauth.postgres_store import PostgresOAuthStore

        return PostgresOAuthStore(await self._database(False))

    def _keep(self, thing: Any) -> Any:
        self._opened.append(thing)
        return thing

    async def aclose(self) -> None:
        for thing in reversed(self._opened):
            await thing.aclose()
        for db in self._databases:
            await db.aclose()


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """The same test on a SQLite file and on a PostgreSQL database."""
    if request.param == "sqlite":
        made = Backend("sqlite", str(tmp_path / "glove.db"))
    else:
        made = Backend("postgres", request.getfixturevalue("postgres_url"))
    try:
        yield made
    finally:
        await made.aclose()


@asynccontextmanager
async def store_at(where: str, session_id: str, **options: Any) -> AsyncIterator[Any]:
    """A store on ``where`` (a SQLite path, or a ``postgresql://`` URL with a database of its
    own), for child processes and for tests that open stores by location."""
    if not where.startswith("postgresql://"):
        async with SqliteStore(where, session_id, **options) as store:
            yield store
        return
    from glove_core.postgres import PostgresDatabase
    from glove_core.stores.postgres import PostgresStore

    async with PostgresDatabase(where) as db:
        yield await PostgresStore(db, session_id, **options).open()
