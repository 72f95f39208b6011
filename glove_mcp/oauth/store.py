"""The ``OAuthStore`` protocol and the in-memory store.

A store maps a key (usually a catalogue entry id, optionally per user) to an ``OAuthState``.
Stores that can serialise refreshes across processes also implement ``lock(key)``
(``LockingOAuthStore``); ``OAuthTokenSource`` uses it so two processes never spend one
refresh token twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol, runtime_checkable

from glove_mcp.oauth.state import OAuthState

__all__ = ["LockingOAuthStore", "MemoryOAuthStore", "OAuthStore"]


@runtime_checkable
class OAuthStore(Protocol):
    """Where OAuth client information, tokens and the PKCE verifier are kept, per key.

    Shaped like the SDK's ``TokenStorage``, but keyed so one store serves many servers/users.
    Implementations must never log the secrets they hold.
    """

    async def get(self, key: str) -> OAuthState | None:
        """The state stored for ``key``, or ``None``."""
        ...

    async def set(self, key: str, state: OAuthState) -> None:
        """Replace the state stored for ``key``."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` (no error if absent)."""
        ...

    async def clear(self) -> None:
        """Forget every key."""
        ...


@runtime_checkable
class LockingOAuthStore(OAuthStore, Protocol):
    """A store that can hold an exclusive lock on a key across tasks (and processes, if it can).

    While the lock is held by a task, that task's own ``get``/``set`` calls still work.
    """

    def lock(self, key: str) -> AbstractAsyncContextManager[None]:
        """An async context manager holding the exclusive lock for ``key``."""
        ...


class MemoryOAuthStore:
    """An ``OAuthStore`` in process memory: for tests, and for one short-lived process."""

    def __init__(self) -> None:
        self._states: dict[str, OAuthState] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"MemoryOAuthStore(keys={sorted(self._states)!r})"

    async def get(self, key: str) -> OAuthState | None:
        """The state stored for ``key``, or ``None``."""
        return self._states.get(key)

    async def set(self, key: str, state: OAuthState) -> None:
        """Replace the state stored for ``key``."""
        self._states[key] = state

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        self._states.pop(key, None)

    async def clear(self) -> None:
        """Forget every key."""
        self._states.clear()

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        """Exclusive lock on ``key`` within this process."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            yield
