"""Where the headless server's sessions live: claim a new id, find an existing one (internal).

The server asks this seam, never the database directly, so another backend (PostgreSQL for
several server instances) can stand in. Both calls cost one primary-key statement, whatever
the number of sessions, and the database decides races: of several requests — in one process
or several sharing the file — creating one id, exactly one wins.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from glove_core import SqliteStore, StoreAdapter
from glove_mcp.server._session_rows import SessionRow, delete_session, list_sessions

__all__ = ["SessionRow", "SessionStorage", "SessionStore", "SqliteSessionStorage"]


@runtime_checkable
class SessionStore(StoreAdapter, Protocol):
    """A session's conversation store as the server holds it: a ``SqliteStore``, or a
    ``PostgresStore`` with ``HeadlessServer(database_url=)``."""

    async def aclose(self) -> None:
        """Release what the store holds (the server calls it when it closes the session)."""
        ...


class SessionStorage(Protocol):
    """Opens sessions' stores; answers None where the id is taken (claim) or unknown (find)."""

    async def claim(self, session_id: str) -> SessionStore | None:
        """The store of a session created by this call, or None when the id exists."""
        ...

    async def find(self, session_id: str) -> SessionStore | None:
        """The store of an existing session, or None when there is no such session."""
        ...

    async def list_page(self, after: str | None, limit: int) -> list[SessionRow]:
        """Up to ``limit`` sessions with ids after ``after``, in id order (one range scan)."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Delete the session and everything kept under its id; False when it did not exist.
        The server has closed the session first."""
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

    async def claim(self, session_id: str) -> SqliteStore | None:
        """See ``SessionStorage.claim``."""
        return await self._open(session_id, create=True)

    async def find(self, session_id: str) -> SqliteStore | None:
        """See ``SessionStorage.find``."""
        return await self._open(session_id, create=False)

    async def list_page(self, after: str | None, limit: int) -> list[SessionRow]:
        """See ``SessionStorage.list_page``."""
        return await list_sessions(self.path, after=after, limit=limit)

    async def delete(self, session_id: str) -> bool:
        """See ``SessionStorage.delete``."""
        return await delete_session(self.path, session_id)

    async def _open(self, session_id: str, *, create: bool) -> SqliteStore | None:
        store = SqliteStore(self.path, session_id, check_pages=not self._checked)
        try:
            ok = await (store.create_session() if create else store.session_exists())
        except BaseException:
            await store.aclose()
            raise
        self._checked = True
        if not ok:
            await store.aclose()
            return None
        return store

    def __repr__(self) -> str:
        return f"SqliteSessionStorage({self.path!r})"
