"""An ``OAuthStore`` whose backing store is chosen after it is handed out (internal).

``glove-mcp serve`` builds the server's routes (which need a store) before the database the
store may live in is open; the store is set once it is, before the first request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from glove_mcp.errors import OAuthStoreError
from glove_mcp.oauth.state import OAuthState
from glove_mcp.oauth.store import LockingOAuthStore, OAuthStore

__all__ = ["LateStore"]


class LateStore:
    """Delegates to ``inner`` (set before first use); locks when ``inner`` can."""

    def __init__(self) -> None:
        self.inner: OAuthStore | None = None

    def __repr__(self) -> str:
        return f"LateStore({self.inner!r})"

    def _store(self) -> OAuthStore:
        if self.inner is None:
            raise OAuthStoreError("the token store is not open yet")
        return self.inner

    async def get(self, key: str) -> OAuthState | None:
        """The inner store's state for ``key``."""
        return await self._store().get(key)

    async def set(self, key: str, state: OAuthState) -> None:
        """Set in the inner store."""
        await self._store().set(key, state)

    async def delete(self, key: str) -> None:
        """Delete in the inner store."""
        await self._store().delete(key)

    async def clear(self) -> None:
        """Clear the inner store."""
        await self._store().clear()

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        """The inner store's lock, if it has one."""
        store = self._store()
        if isinstance(store, LockingOAuthStore):
            async with store.lock(key):
                yield
        else:
            yield
