"""A cross-process exclusive lock on a lock file (``fcntl.flock``), usable from asyncio.

The lock is re-entrant within one task (and the tasks it spawns): a token refresh holds it
while it calls the store's ``set``, which takes it again. Other tasks and other processes wait.
"""

from __future__ import annotations

import asyncio
import contextvars
import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

__all__ = ["FileLock"]


def _open_and_lock(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlock_and_close(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class FileLock:
    """An exclusive ``flock`` on ``path``, held across processes, re-entrant per task context.

    Args:
        path: the lock file (created with mode 0600 if missing; never deleted, so every
            process locks the same inode).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        # Tasks inherit a copy of the context, so a task started while the lock is held sees
        # itself as a holder; that is what the re-entrancy is for.
        self._held: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"glove_mcp_filelock_{id(self)}", default=False
        )
        self._local = asyncio.Lock()

    def __repr__(self) -> str:
        return f"FileLock({str(self.path)!r})"

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the lock (waiting off the event loop); re-entrant within the holding task."""
        if self._held.get():
            yield
            return
        async with self._local:
            # The blocking flock runs in a thread. If we are cancelled while it waits, the
            # thread still finishes; release the lock it then takes so nobody waits forever.
            future = asyncio.ensure_future(asyncio.to_thread(_open_and_lock, self.path))
            try:
                fd = await asyncio.shield(future)
            except asyncio.CancelledError:
                future.add_done_callback(_release_when_done)
                raise
            token = self._held.set(True)
            try:
                yield
            finally:
                self._held.reset(token)
                await asyncio.to_thread(_unlock_and_close, fd)


def _release_when_done(future: asyncio.Future[int]) -> None:
    if future.cancelled() or future.exception() is not None:
        return
    _unlock_and_close(future.result())
