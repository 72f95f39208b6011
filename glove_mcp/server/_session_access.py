"""Opening the headless server's sessions for a principal (internal).

``SessionAccess`` is the one way the routes reach a session: it checks the id, creates a
session for its principal or finds one it may use (its own; any, to read, for an admin),
opens it through the session cache (the agent factory, the relay followers see) and pins it
for the request. Another principal's session is answered 404, as an unknown one, before
anything of it is opened.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack

from starlette.exceptions import HTTPException

from glove_core import Glove
from glove_mcp.server._session_cache import (
    CachedSession,
    NoRoomError,
    SessionCache,
    SessionOpenError,
)
from glove_mcp.server._session_owners import SessionLimitError
from glove_mcp.server._stream import Relays
from glove_mcp.server.principals import Principal, building_for
from glove_mcp.server.session_storage import SessionStorage, SessionStore

__all__ = [
    "NO_FILES",
    "SESSION_ID",
    "AgentFactory",
    "RetryLater",
    "SessionAccess",
    "check_id",
    "may",
]

AgentFactory = Callable[[str, SessionStore, AsyncExitStack], "Glove | Awaitable[Glove]"]
"""``factory(session_id, store, stack)`` builds a session's agent on ``store`` (a
``SqliteStore``, or a ``PostgresStore`` with ``database_url=``); resources it opens (an MCP
mount, an event queue) go on ``stack``, which the server closes when it closes the session
(idle, or at shutdown). It runs again when a closed session is reopened; ``session_owner()``
names the session's principal while it runs."""

NO_FILES = (
    "out of file descriptors (ulimit -n), or the database file cannot be opened: answering "
    "503; raise the limit or lower --max-sessions / --max-connections"
)
"""The log line of a request refused for want of file descriptors."""

SESSION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
"""What a session id may be (matched whole: ``fullmatch``), except only dots."""


def check_id(session_id: str, what: str = "a session id") -> str:
    """``session_id`` if it is a valid id (the whole of it; not only dots), else 400."""
    if SESSION_ID.fullmatch(session_id) is None or not session_id.strip("."):
        raise HTTPException(400, f"{what} is 1-128 characters from [A-Za-z0-9_.:-], not only dots")
    return session_id


class RetryLater(HTTPException):
    """A 429 or 503 the client should retry after ``retry_after`` seconds (``Retry-After``)."""

    def __init__(self, status_code: int, detail: str, retry_after: int) -> None:
        super().__init__(status_code, detail)
        self.retry_after = retry_after


def may(principal: Principal, owner: str, *, read: bool) -> bool:
    """Whether ``principal`` may use a session of ``owner`` (an admin may read any)."""
    return owner == principal.name or (read and principal.is_admin)


class SessionAccess:
    """The server's sessions as its routes use them.

    Args:
        storage: where sessions live.
        cache: the open sessions.
        relays: the follow relays (each opened session is attached to its own).
        factory: builds a session's agent.
        max_per_principal: sessions one principal may have (None: no limit).
    """

    def __init__(
        self,
        storage: SessionStorage,
        cache: SessionCache,
        relays: Relays,
        factory: AgentFactory,
        max_per_principal: int | None,
    ) -> None:
        self.storage = storage
        self.cache = cache
        self.relays = relays
        self._factory = factory
        self._max_per_principal = max_per_principal

    def release(self, session: CachedSession) -> None:
        """Unpin a session ``acquire`` returned."""
        self.cache.release(session)

    async def acquire(
        self, session_id: str, principal: Principal, *, create: bool = False, read: bool = False
    ) -> CachedSession:
        """The session, open and pinned (pair with ``self.cache.release``): 404 unless
        ``principal`` owns it (or, for a ``read``, is an admin)."""
        check_id(session_id)

        async def open_session() -> CachedSession:
            if create:
                try:
                    store = await self.storage.claim(
                        session_id, principal.name, self._max_per_principal
                    )
                except SessionLimitError as exc:
                    raise RetryLater(429, str(exc), 60) from None
                if store is None:
                    raise HTTPException(409, f"session {session_id!r} already exists")
                owner = principal.name
            else:
                found = await self.storage.find_owned(session_id)
                # Another's session is unknown to this principal: its existence stays hidden.
                if found is None or not may(principal, found[0], read=read):
                    if found is not None:
                        await found[1].aclose()
                    raise HTTPException(404, f"no session {session_id!r}")
                owner, store = found
            stack = AsyncExitStack()
            try:
                with building_for(owner):
                    glove = self._factory(session_id, store, stack)
                    if inspect.isawaitable(glove):
                        glove = await glove
                glove.build()
            except BaseException:
                try:
                    await stack.aclose()
                finally:
                    await store.aclose()
                raise
            # Followers of the session see what its agent does until it closes.
            stack.callback(self.relays.attach(session_id, glove, store))
            return CachedSession(session_id, glove, store, stack, owner=owner)

        try:
            session = await self.cache.acquire(session_id, open_session, new=create)
        except SessionOpenError:
            raise HTTPException(409, f"session {session_id!r} already exists") from None
        except NoRoomError as exc:
            raise RetryLater(503, str(exc), 2) from None
        if not may(principal, session.owner, read=read):
            self.cache.release(session)
            raise HTTPException(404, f"no session {session_id!r}")
        return session

    @contextlib.asynccontextmanager
    async def use(
        self, session_id: str, principal: Principal, *, read: bool = False
    ) -> AsyncIterator[CachedSession]:
        """``acquire`` for the block, then ``release``."""
        session = await self.acquire(session_id, principal, read=read)
        try:
            yield session
        finally:
            self.cache.release(session)
