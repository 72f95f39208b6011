"""A cross-process exclusive lock on a lock file, usable from asyncio, on every platform.

The OS-level lock is the ``filelock`` package's (``flock`` on Unix, ``msvcrt.locking`` on
Windows). Around it: the lock is re-entrant within one task (and the tasks it spawns), because
a token refresh holds it while it calls the store's ``set``, which takes it again; other tasks
of this process queue on an ``asyncio.Lock``, other processes on the file.

The file lock is taken by non-blocking attempts, each in a worker thread (opening the file is
blocking I/O), with asyncio sleeps between them: no thread waits on the lock, a waiting task
can be cancelled at once, and ``filelock``'s guard against a thread re-taking a lock held by
another of its instances (a blocking acquire raises "Deadlock" there, and worker threads are
reused) never applies.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import filelock

from glove_mcp.errors import OAuthStoreError
from glove_mcp.oauth.private_files import make_private_dirs

__all__ = ["FileLock"]

_FIRST_RETRY = 0.002
_LONGEST_RETRY = 0.05


def _try_lock(lock: filelock.BaseFileLock, path: Path) -> bool:
    make_private_dirs(path.parent)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        return False
    return True


class FileLock:
    """An exclusive lock on ``path``, held across processes, re-entrant per task context.

    Args:
        path: the lock file (created with mode 0600 if missing, its folder with 0700; never
            deleted on Unix, so every process locks the same inode).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        # thread_local=False: it is taken and released in different worker threads.
        self._file = filelock.FileLock(str(path), mode=0o600, thread_local=False)
        # Tasks inherit a copy of the context, so a task started while the lock is held sees
        # itself as a holder; that is what the re-entrancy is for.
        self._held: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"glove_mcp_filelock_{id(self)}", default=False
        )
        self._local = asyncio.Lock()

    def __repr__(self) -> str:
        return f"FileLock({str(self.path)!r})"

    async def _acquire(self) -> None:
        delay = _FIRST_RETRY
        while True:
            # If we are cancelled while an attempt runs, the thread still finishes; release
            # what it then took so nobody waits forever.
            attempt = asyncio.ensure_future(asyncio.to_thread(_try_lock, self._file, self.path))
            try:
                if await asyncio.shield(attempt):
                    return
            except asyncio.CancelledError:
                attempt.add_done_callback(self._release_when_taken)
                raise
            except OSError as exc:
                raise OAuthStoreError(
                    f"cannot take the lock file {self.path}: {exc.strerror or exc} "
                    f"(errno {exc.errno}); nothing was written"
                ) from exc
            await asyncio.sleep(delay)
            delay = min(delay * 2, _LONGEST_RETRY)

    def _release_when_taken(self, attempt: asyncio.Future[bool]) -> None:
        if not attempt.cancelled() and attempt.exception() is None and attempt.result():
            self._file.release()

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the lock (waiting off the event loop); re-entrant within the holding task."""
        if self._held.get():
            yield
            return
        async with self._local:
            await self._acquire()
            token = self._held.set(True)
            try:
                yield
            finally:
                self._held.reset(token)
                await asyncio.to_thread(self._file.release)
