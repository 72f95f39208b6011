"""Advisory locks and LISTEN/NOTIFY wake-ups for the PostgreSQL layer (internal).

A turn lock is a *session-level* advisory lock (``pg_try_advisory_lock``), held on a
connection of its own for as long as the turn runs: PostgreSQL releases it when the
connection closes, so a holder that crashes or is SIGKILLed never leaves it behind (the
server notices the dead connection, at the latest through TCP keepalives). Waiting polls
with a non-blocking attempt, backing off from 2 ms to 50 ms, as the SQLite turn lock does, so
an ``AbortSignal`` or a cancellation ends the wait at once and no server-side wait is left
behind; between attempts the waiter gives its connection back, so only holders keep one.
A holder releases with ``pg_advisory_unlock_all`` before its connection goes back to the pool
(one statement, run before the turn is over, so the next turn finds the lock free); a
connection whose release failed, or that was interrupted mid-statement, is closed instead, so
a connection never goes back to the pool still holding a lock. (The pool has no reset hook:
psycopg's pool runs one in a background task, a second statement that would let the next
turn find the lock still held for a moment.)

Lock keys are 64-bit: the first 8 bytes of SHA-256 of the lock's name (namespaced by its
user, e.g. ``glove.turn:<conversation id>``). Two names sharing a key would only make two
conversations wait for each other, never break one.

``Notifications`` keeps one connection that LISTENs to the layer's channels (``CHANNELS``,
fixed, so no statement ever runs on it while it waits) and calls the callbacks registered for
each payload. A lost connection is reopened with a back-off; every
callback is then called once, since notifications sent meanwhile are lost (the tables stay
the truth; a notification only says "look now").
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from glove_core.abort import AbortSignal
from glove_core.errors import StoreError

__all__ = ["CHANNELS", "LockPool", "Notifications", "lock_key"]

logger = logging.getLogger(__name__)

_FIRST_POLL = 0.002
_LAST_POLL = 0.05
_RECONNECT = (0.1, 5.0)
_READY_TIMEOUT = 30.0

CHANNELS = ("glove_events", "glove_stream")
"""The channels the layer notifies on: events queued (payload: the conversation id) and
streamed turn events (payload: the conversation id)."""


def lock_key(name: str) -> int:
    """The signed 64-bit advisory-lock key of ``name``."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class LockPool:
    """Connections that hold session-level advisory locks, at most ``size`` at once."""

    def __init__(self, url: str, size: int, name: str, timeout: float) -> None:
        self._name = name
        self._size = size
        self._timeout = timeout
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[tuple[object, ...]]] = (
            AsyncConnectionPool(
                url,
                min_size=0,
                max_size=size,
                open=False,
                name="glove-locks",
                kwargs={"autocommit": True},
            )
        )
        self._opened = False

    @asynccontextmanager
    async def hold(
        self,
        key: int,
        signal: AbortSignal,
        wait_limit: float | None,
        on_timeout: Callable[[float], Exception],
    ) -> AsyncIterator[None]:
        """Hold advisory lock ``key`` while the block runs (see the module docstring)."""
        if not self._opened:
            self._opened = True
            await self._pool.open(wait=False)
        start = time.monotonic()
        delay = _FIRST_POLL
        while True:
            signal.throw_if_aborted()
            conn = await self._connection(signal)
            try:
                cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
                row = await cursor.fetchone()
            except BaseException:
                await self._pool.putconn(conn)
                raise
            if row is not None and row[0] is True:
                break
            # A waiter holds no connection: only holders do, so waiting turns never use up
            # the database's connections.
            await self._pool.putconn(conn)
            waited = time.monotonic() - start
            if wait_limit is not None and waited >= wait_limit:
                raise on_timeout(waited)
            pause = delay if wait_limit is None else min(delay, max(wait_limit - waited, 0.0))
            signal.throw_if_aborted()
            await signal.race(asyncio.sleep(pause))
            delay = min(delay * 2, _LAST_POLL)
        try:
            try:
                yield
            finally:
                try:
                    await conn.execute("SELECT pg_advisory_unlock_all()")
                except psycopg.Error:
                    # Closed, the server drops whatever the connection held; the pool then
                    # discards it. (A cancellation leaves the statement active: the pool
                    # closes such a connection itself.)
                    logger.debug("unlocking %s failed; the connection is discarded", key)
                    await conn.close()
        finally:
            # A connection interrupted mid-statement is closed by the pool, which releases
            # whatever it held.
            await self._pool.putconn(conn)

    async def _connection(self, signal: AbortSignal) -> psycopg.AsyncConnection[tuple[object, ...]]:
        try:
            return await signal.race(self._pool.getconn(timeout=self._timeout))
        except PoolTimeout:
            raise StoreError(
                f"{self._size} turns already hold a lock connection to PostgreSQL database "
                f"{self._name} and none came free within {self._timeout:g} s: raise "
                "--database-max-locks (max_locks=)"
            ) from None
        except psycopg.OperationalError as exc:
            raise StoreError(f"PostgreSQL database {self._name}: {exc}") from exc

    async def aclose(self) -> None:
        if self._opened:
            await self._pool.close()


class Notifications:
    """One LISTENing connection per process, dispatching ``(channel, payload)`` to callbacks."""

    def __init__(self, url: str, name: str) -> None:
        self._url = url
        self._name = name
        self._callbacks: dict[tuple[str, str], list[Callable[[], None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._closed = False

    async def add(self, channel: str, payload: str, callback: Callable[[], None]) -> None:
        """Register ``callback``; returns once the connection is listening.

        Raises:
            ValueError: ``channel`` is not one of ``CHANNELS``.
            StoreError: the listening connection could not be opened in 30 s.
        """
        if channel not in CHANNELS:
            raise ValueError(f"channel must be one of {CHANNELS}, got {channel!r}")
        self._callbacks.setdefault((channel, payload), []).append(callback)
        if self._task is None:
            self._task = asyncio.create_task(self._listen())
        try:
            await asyncio.wait_for(self._ready.wait(), _READY_TIMEOUT)
        except TimeoutError:
            self.remove(channel, payload, callback)
            raise StoreError(
                f"cannot LISTEN on PostgreSQL database {self._name}: no connection within "
                f"{_READY_TIMEOUT:g} s"
            ) from None

    def remove(self, channel: str, payload: str, callback: Callable[[], None]) -> None:
        """Unregister ``callback`` (the channel stays listened to: it costs nothing idle)."""
        callbacks = self._callbacks.get((channel, payload), [])
        if callback in callbacks:
            callbacks.remove(callback)
        if not callbacks:
            self._callbacks.pop((channel, payload), None)

    async def _listen(self) -> None:
        delay = _RECONNECT[0]
        reconnected = False
        while not self._closed:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._url, autocommit=True
                ) as conn:
                    for channel in CHANNELS:
                        await conn.execute(f"LISTEN {channel}")
                    self._ready.set()
                    delay = _RECONNECT[0]
                    if reconnected:
                        self._call_all()
                    async for note in conn.notifies():
                        for callback in list(self._callbacks.get((note.channel, note.payload), [])):
                            callback()
            except psycopg.OperationalError as exc:
                logger.warning(
                    "lost the LISTEN connection to %s (%s); reconnecting in %.1f s",
                    self._name,
                    exc,
                    delay,
                )
            reconnected = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RECONNECT[1])

    def _call_all(self) -> None:
        for callbacks in list(self._callbacks.values()):
            for callback in list(callbacks):
                callback()

    async def aclose(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
