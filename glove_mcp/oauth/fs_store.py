"""``FsOAuthStore``: every key's OAuth state in one JSON file (mode 0600).

File format (version 1)::

    {"format": "glove-mcp-oauth", "version": 1, "entries": {"<key>": <state>, ...}}

Writes are atomic (a unique temporary file in the same directory, fsync, rename, fsync of the
directory) and serialised across processes by an ``flock`` on ``<path>.lock``. A corrupt file,
or one written in a newer format, raises a typed error and is never overwritten. A write that
fails (a full disk, a file size limit) raises ``OAuthStoreError`` and leaves the file as it
was; a writer killed mid-write leaves a temporary file (mode 0600) that the next write
removes. New folders are made with mode 0700, the file with 0600.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from glove_mcp.errors import OAuthStoreCorruptError, OAuthStoreError, OAuthStoreVersionError
from glove_mcp.oauth._filelock import FileLock
from glove_mcp.oauth.private_files import make_private_dirs, remove_leftovers
from glove_mcp.oauth.state import OAuthState, state_from_json, state_to_json

__all__ = ["FsOAuthStore"]

_FORMAT = "glove-mcp-oauth"
_VERSION = 1


class FsOAuthStore:
    """An ``OAuthStore`` in a JSON file readable only by its owner.

    Args:
        path: the JSON file (created on first write, mode 0600, with each missing parent
            folder, mode 0700). A sibling ``<path>.lock`` file holds the cross-process lock.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = FileLock(self.path.with_name(self.path.name + ".lock"))

    def __repr__(self) -> str:
        return f"FsOAuthStore({str(self.path)!r})"

    async def get(self, key: str) -> OAuthState | None:
        """The state stored for ``key``, or ``None``.

        Raises:
            OAuthStoreCorruptError: the file is not valid JSON of this format.
            OAuthStoreVersionError: the file was written in a newer format.
        """
        entries = await asyncio.to_thread(self._read_entries)
        raw = entries.get(key)
        if raw is None:
            return None
        try:
            return state_from_json(raw)
        except ValidationError as exc:
            raise OAuthStoreCorruptError(
                str(self.path),
                f"entry {key!r} is not a valid OAuth state ({exc.error_count()} errors)",
            ) from None

    async def set(self, key: str, state: OAuthState) -> None:
        """Replace the state stored for ``key`` (atomic, under the cross-process lock)."""
        data = state_to_json(state)
        async with self._lock.hold():
            await asyncio.to_thread(self._update, key, data)

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        async with self._lock.hold():
            await asyncio.to_thread(self._update, key, None)

    async def clear(self) -> None:
        """Forget every key (the file stays, empty)."""
        async with self._lock.hold():
            await asyncio.to_thread(self._clear)

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        """Hold the store's exclusive lock (one lock for the whole file) across processes."""
        async with self._lock.hold():
            yield

    # -- blocking helpers, run in a thread ------------------------------------------------

    def _read_entries(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise OAuthStoreError(f"cannot read OAuth store file {self.path}: {exc}") from exc
        try:
            doc = json.loads(raw.decode("utf-8"))
        except json.JSONDecodeError as exc:
            raise OAuthStoreCorruptError(str(self.path), f"not JSON: {exc.msg}") from None
        except UnicodeDecodeError:
            raise OAuthStoreCorruptError(str(self.path), "not UTF-8 text") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise OAuthStoreCorruptError(str(self.path), f"not a {_FORMAT!r} document")
        version = doc.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise OAuthStoreCorruptError(str(self.path), f"bad format version {version!r}")
        if version > _VERSION:
            raise OAuthStoreVersionError(str(self.path), version, _VERSION)
        entries = doc.get("entries")
        if not isinstance(entries, dict):
            raise OAuthStoreCorruptError(str(self.path), "'entries' is not an object")
        return entries

    def _update(self, key: str, data: dict[str, Any] | None) -> None:
        # Reading first also refuses to overwrite a corrupt or newer file.
        entries = self._read_entries()
        if data is None:
            if key not in entries:
                return
            entries.pop(key)
        else:
            entries[key] = data
        self._write_entries(entries)

    def _clear(self) -> None:
        if not self.path.exists():
            return
        self._read_entries()
        self._write_entries({})

    def _write_entries(self, entries: dict[str, Any]) -> None:
        try:
            self._replace_file(entries)
        except OSError as exc:
            raise OAuthStoreError(
                f"cannot write OAuth store file {self.path}: {exc.strerror or exc} "
                f"(errno {exc.errno}); the file is unchanged"
            ) from exc

    def _replace_file(self, entries: dict[str, Any]) -> None:
        directory = self.path.parent
        make_private_dirs(directory)
        prefix, suffix = f".{self.path.name}.", ".tmp"
        # Under the lock every writer holds, any temporary file is a dead writer's.
        remove_leftovers(directory, prefix, suffix)
        body = json.dumps(
            {"format": _FORMAT, "version": _VERSION, "entries": entries}, indent=2, sort_keys=True
        )
        # mkstemp creates the file with mode 0600 and a unique name, so concurrent writers
        # (or a crashed one's leftovers) never collide.
        fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, self.path)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
