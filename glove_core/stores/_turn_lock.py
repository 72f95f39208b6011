"""The turn lock of ``SqliteStore``: one turn of a conversation at a time, across processes.

Each conversation has a lock file in a folder beside the database (``chat.db`` →
``chat.db-turns/``), named from its id made safe for any file system: the id's plain
characters (at most 40) and a hash of the whole id, so two ids never share a file and no id
can climb out of the folder. A turn holds an exclusive ``flock`` on that file; the kernel
drops it when the holder closes the file or dies, so a crash or SIGKILL never leaves a stale
lock. ``flock`` locks belong to an open file, not to a process, so two store objects in one
process exclude each other too (``fcntl``'s POSIX record locks would not, and closing any
descriptor of the file would drop them — the reason SQLite warns about them).

Waiting polls with a non-blocking attempt in a worker thread, backing off from 2 ms to 50 ms,
so the event loop never blocks, an ``AbortSignal`` or a cancellation ends the wait at once,
and the timeout is exact to one poll. The lock is not fair: a process that releases it and asks
again at once may win again.

Where it holds: processes on one machine that open the database through the same file.
SQLite's WAL mode already needs that (its index lives in shared memory). On NFS, Linux turns
``flock`` into a server-side lock that only works when the server supports locking; WAL does
not work there in any case, so the store is not meant for network file systems.

On Windows (no ``fcntl``) the same file is locked with ``msvcrt.locking`` on its first byte,
which Windows also releases when the process ends; that path is not exercised by the tests,
which run on Linux and macOS.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from glove_core.abort import AbortSignal
from glove_core.errors import ConversationLockedError, StoreError

__all__ = ["DEFAULT_TURN_LOCK_TIMEOUT", "lock_file_path", "turn_lock"]

DEFAULT_TURN_LOCK_TIMEOUT = 300.0
"""Seconds a turn waits for another process's turn of the same conversation by default."""

_FIRST_POLL = 0.002
_LAST_POLL = 0.05
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def lock_file_path(db_path: str, conversation_id: str) -> str:
    """The lock file of ``conversation_id`` for the database at ``db_path``."""
    digest = hashlib.sha256(conversation_id.encode()).hexdigest()[:24]
    readable = _UNSAFE.sub("_", conversation_id)[:40].lstrip(".")
    return os.path.join(f"{db_path}-turns", f"{readable}-{digest}.lock")


@asynccontextmanager
async def turn_lock(
    path: str, conversation_id: str, signal: AbortSignal, wait_limit: float | None
) -> AsyncIterator[None]:
    """Hold the lock file at ``path`` (see the module docstring) while the block runs.

    Raises:
        ConversationLockedError: still held elsewhere after ``wait_limit`` seconds (None: no limit).
        AbortError: ``signal`` fired while waiting.
        StoreError: the lock file cannot be created or opened.
    """
    start = time.monotonic()
    delay = _FIRST_POLL
    while True:
        signal.throw_if_aborted()
        fd = await _attempt(path)
        if fd is not None:
            break
        waited = time.monotonic() - start
        if wait_limit is not None and waited >= wait_limit:
            raise ConversationLockedError(conversation_id, path, waited)
        pause = delay if wait_limit is None else min(delay, max(wait_limit - waited, 0.0))
        signal.throw_if_aborted()  # before the sleep coroutine exists, or it is never awaited
        await signal.race(asyncio.sleep(pause))
        delay = min(delay * 2, _LAST_POLL)
    try:
        yield
    finally:
        # Closing the descriptor releases the lock; closing a local file never blocks, and it
        # must happen even while this task is being cancelled, so it is not sent to a thread.
        os.close(fd)


async def _attempt(path: str) -> int | None:
    """One non-blocking try in a worker thread: the open descriptor holding the lock, or
    None when another holder has it."""
    attempt = asyncio.ensure_future(asyncio.to_thread(_try_lock, path))
    try:
        return await asyncio.shield(attempt)
    except asyncio.CancelledError:
        # The thread may still win the lock. Its descriptor is closed by the callback as soon
        # as it does; the try is non-blocking (microseconds), so wait for it here too, so
        # that no lock outlives the cancelled wait (a second cancel leaves it to the callback).
        attempt.add_done_callback(_close_won)
        await asyncio.wait([attempt])
        raise


def _close_won(attempt: asyncio.Future[int | None]) -> None:
    if not attempt.cancelled() and attempt.exception() is None:
        fd = attempt.result()
        if fd is not None:
            os.close(fd)


def _try_lock(path: str) -> int | None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(
            f"cannot create the turn lock file {path!r} ({exc.strerror}): the folder beside "
            "the database must be writable by every process that runs turns on it"
        ) from exc
    try:
        if _lock_nowait(fd):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


if sys.platform == "win32":  # pragma: no cover - the tests run on Linux and macOS
    import msvcrt

    def _lock_nowait(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _lock_nowait(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
