"""``KeyringOAuthStore``: each key's OAuth state in the OS keyring (one entry per key).

Keyring calls block (D-Bus, Keychain), so they run in a thread. The keyring cannot list its
entries, so the store keeps the list of its keys in one extra entry, used by ``clear()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import keyring
import keyring.errors
from pydantic import ValidationError

from glove_mcp.errors import (
    OAuthKeyringUnavailableError,
    OAuthStoreCorruptError,
    OAuthStoreError,
    OAuthStoreVersionError,
)
from glove_mcp.oauth._filelock import FileLock
from glove_mcp.oauth.state import OAuthState, state_from_json, state_to_json

__all__ = ["KeyringOAuthStore"]

_VERSION = 1
_INDEX_KEY = "__glove_mcp_oauth_keys__"
_T = TypeVar("_T")


class KeyringOAuthStore:
    """An ``OAuthStore`` in the OS keyring (macOS Keychain, Secret Service, Windows Vault).

    Args:
        service: the keyring service name; each key is one entry under it.
        backend: a ``keyring.backend.KeyringBackend`` to use instead of the process default.
        lock_path: a lock file used to serialise refreshes across processes; without it the
            lock only covers this process.

    Raises (from every method):
        OAuthKeyringUnavailableError: there is no usable keyring backend.
    """

    def __init__(
        self,
        service: str = "glove-mcp",
        *,
        backend: Any | None = None,
        lock_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.service = service
        self._backend = backend
        self._file_lock = FileLock(Path(lock_path)) if lock_path is not None else None
        self._local_locks: dict[str, asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"KeyringOAuthStore(service={self.service!r})"

    def _kr(self) -> Any:
        return self._backend if self._backend is not None else keyring.get_keyring()

    async def _call(self, fn: Callable[[], _T]) -> _T:
        try:
            return await asyncio.to_thread(fn)
        except keyring.errors.NoKeyringError as exc:
            raise OAuthKeyringUnavailableError(self.service, type(exc).__name__) from None
        except keyring.errors.KeyringError as exc:
            raise OAuthStoreError(
                f"keyring service {self.service!r} failed: {type(exc).__name__}"
            ) from None

    def _entry_name(self) -> str:
        return f"keyring:{self.service}"

    def _parse(self, key: str, text: str) -> OAuthState:
        where = f"{self._entry_name()}/{key}"
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OAuthStoreCorruptError(where, f"not JSON: {exc.msg}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("version"), int):
            raise OAuthStoreCorruptError(where, "not a glove OAuth keyring entry")
        if doc["version"] > _VERSION:
            raise OAuthStoreVersionError(where, doc["version"], _VERSION)
        try:
            return state_from_json(doc.get("state"))
        except ValidationError as exc:
            raise OAuthStoreCorruptError(where, f"{exc.error_count()} invalid fields") from None

    async def get(self, key: str) -> OAuthState | None:
        """The state stored for ``key``, or ``None``."""
        text = await self._call(lambda: self._kr().get_password(self.service, key))
        if text is None:
            return None
        return self._parse(key, text)

    async def set(self, key: str, state: OAuthState) -> None:
        """Replace the state stored for ``key``."""
        if key == _INDEX_KEY:
            raise ValueError(f"{_INDEX_KEY!r} is reserved by KeyringOAuthStore")
        text = json.dumps({"version": _VERSION, "state": state_to_json(state)})
        await self._call(lambda: self._kr().set_password(self.service, key, text))
        await self._update_index(add=key)

    async def delete(self, key: str) -> None:
        """Forget ``key``."""

        def _delete() -> None:
            # Already absent: delete is idempotent.
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                self._kr().delete_password(self.service, key)

        await self._call(_delete)
        await self._update_index(remove=key)

    async def clear(self) -> None:
        """Forget every key this store wrote."""
        for key in await self._index():
            await self.delete(key)

    async def _index(self) -> list[str]:
        text = await self._call(lambda: self._kr().get_password(self.service, _INDEX_KEY))
        if text is None:
            return []
        try:
            keys = json.loads(text)
        except json.JSONDecodeError:
            keys = None
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise OAuthStoreCorruptError(f"{self._entry_name()}/{_INDEX_KEY}", "bad key index")
        return keys

    async def _update_index(self, add: str | None = None, remove: str | None = None) -> None:
        keys = await self._index()
        new = sorted((set(keys) | ({add} if add else set())) - ({remove} if remove else set()))
        if new != keys:
            text = json.dumps(new)
            await self._call(lambda: self._kr().set_password(self.service, _INDEX_KEY, text))

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        """Exclusive lock on ``key`` (across processes only when ``lock_path`` was given)."""
        if self._file_lock is not None:
            async with self._file_lock.hold():
                yield
            return
        async with self._local_locks.setdefault(key, asyncio.Lock()):
            yield
