"""Where the headless server's sessions live: claim a new id, find an existing one (internal).

The server asks this seam, never the database directly, so another backend (PostgreSQL for
several server instances) can stand in. Both calls cost one primary-key statement, whatever
the number of sessions, and the database decides races: of several requests — in one process
or several sharing the file — creating one id, exactly one wins.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Protocol, runtime_checkable

from glove_core import SqliteStore, StoreAdapter
from glove_core.sqlite import SqliteDatabase
from glove_mcp.server._session_owners import (
    OWNERS_SQLITE,
    claim_sqlite,
    forget_sqlite,
    now,
    owner_sqlite,
    pending_sqlite,
)
from glove_mcp.server._session_rows import SessionRow, delete_rows, list_sessions

__all__ = ["SessionRow", "SessionStorage", "SessionStore", "SqliteSessionStorage"]


@runtime_checkable
class SessionStore(StoreAdapter, Protocol):
    """A session's conversation store as the server holds it: a ``SqliteStore``, or a
    ``PostgresStore`` with ``HeadlessServer(database_url=)``."""

    async def aclose(self) -> None:
        """Release what the store holds (the server calls it when it closes the session)."""
        ...


class SessionStorage(Protocol):
    """Opens sessions' stores; answers None where the id is taken (claim) or unknown (find).

    Each session belongs to a principal (``_session_owners``)."""

    async def claim(
        self, session_id: str, owner: str, limit: int | None = None
    ) -> SessionStore | None:
        """The store of a session created by this call for ``owner``, or None when the id
        exists.

        Raises:
            SessionLimitError: ``owner`` has ``limit`` sessions already.
        """
        ...

    async def owner(self, session_id: str) -> str | None:
        """The principal owning the session, or None when there is no such session."""
        ...

    async def find(self, session_id: str) -> SessionStore | None:
        """The store of an existing session, or None when there is no such session."""
        ...

    async def find_owned(self, session_id: str) -> tuple[str, SessionStore] | None:
        """The owner and the store of an existing session, or None when there is no such
        session: what opening a session needs, in one lookup where the storage can."""
        ...

    async def list_page(
        self, after: str | None, limit: int, owner: str | None = None
    ) -> list[SessionRow]:
        """Up to ``limit`` sessions with ids after ``after``, in id order (one range scan);
        only ``owner``'s, or every session when it is None."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Delete the session and everything kept under its id; False when it did not exist.
        The server has closed the session first."""
        ...

    async def pending_events(self) -> int:
        """How many outside events wait in the database, every session together (0 when it
        keeps none)."""
        ...


class SqliteSessionStorage:
    """Sessions as ``SqliteStore`` conversations in one SQLite file.

    Args:
        path: the SQLite file (created when missing).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        # SQLite's quick_check reads the whole file (about 0.7 ms per MB): the first store
        # opened checks it, the stores of later sessions trust that check.
        self._checked = False
        self._owners: SqliteDatabase | None = None
        self._opening = asyncio.Lock()

    async def _database(self) -> SqliteDatabase:
        """The connection the server's own statements use (owners, pages). The first call
        checks the file and migrates its tables (the conversations', then the owners'): at
        the first request, so a damaged file is answered 503 rather than stopping start-up."""
        if self._owners is not None:
            return self._owners
        async with self._opening:
            if self._owners is None:
                # The conversations' tables first: the owners' migration reads them.
                store = SqliteStore(self.path, "-", check_pages=not self._checked)
                try:
                    await store.session_exists()
                finally:
                    await store.aclose()
                self._checked = True
                owners = SqliteDatabase(self.path, OWNERS_SQLITE, check_pages=False)
                await owners.open()
                self._owners = owners
        return self._owners

    async def claim(
        self, session_id: str, owner: str, limit: int | None = None
    ) -> SqliteStore | None:
        """See ``SessionStorage.claim``."""
        db = await self._database()
        stamp = now()
        if not await db.write(lambda c: claim_sqlite(c, session_id, owner, stamp, limit)):
            return None
        return await self._open(session_id)

    async def owner(self, session_id: str) -> str | None:
        """See ``SessionStorage.owner``."""
        db = await self._database()
        return await db.read(lambda conn: owner_sqlite(conn, session_id))

    async def find(self, session_id: str) -> SqliteStore | None:
        """See ``SessionStorage.find``."""
        return await self._open(session_id)

    async def find_owned(self, session_id: str) -> tuple[str, SqliteStore] | None:
        """See ``SessionStorage.find_owned``."""
        owner = await self.owner(session_id)
        store = None if owner is None else await self._open(session_id)
        return None if owner is None or store is None else (owner, store)

    async def list_page(
        self, after: str | None, limit: int, owner: str | None = None
    ) -> list[SessionRow]:
        """See ``SessionStorage.list_page``."""
        db = await self._database()
        return await db.read(
            lambda conn: list_sessions(conn, after=after, limit=limit, owner=owner)
        )

    async def delete(self, session_id: str) -> bool:
        """See ``SessionStorage.delete``."""
        db = await self._database()

        def write(conn: sqlite3.Connection) -> bool:
            forget_sqlite(conn, session_id)  # before its owner row goes with the rest
            return delete_rows(conn, session_id)

        return await db.write(write)

    async def pending_events(self) -> int:
        """See ``SessionStorage.pending_events``."""
        db = await self._database()
        return await db.read(pending_sqlite)

    async def _open(self, session_id: str) -> SqliteStore | None:
        await self._database()  # the file checked once, by the first call
        store = SqliteStore(self.path, session_id, check_pages=False)
        try:
            ok = await store.session_exists()
        except BaseException:
            await store.aclose()
            raise
        if not ok:
            await store.aclose()
            return None
        return store

    async def aclose(self) -> None:
        """Close the server's own connection to the file."""
        owners, self._owners = self._owners, None
        if owners is not None:
            await owners.aclose()

    def __repr__(self) -> str:
        return f"SqliteSessionStorage({self.path!r})"
