"""The PostgreSQL layer under the multi-instance server: one pool, migrations, locks, wake-ups.

The same contracts as the SQLite layer (``glove_core.sqlite``), for several processes on
several machines sharing one database: ``PostgresStore`` (conversations),
``PostgresEventQueue`` (outside events), ``glove_mcp``'s ``PostgresMcpAdapter`` and
``PostgresOAuthStore`` are *components* that describe their tables as a ``PostgresSchema``
and reach the database only through one ``PostgresDatabase`` per process.

Needs the ``postgres`` extra (``pip install 'glove-agents[postgres]'``): psycopg 3 and its pool.

Migrations:
    Table ``glove_store_schema`` holds one ``(component, version)`` row per component, as in
    SQLite. The first use of a component by a ``PostgresDatabase`` migrates it forward in one
    transaction that holds a transaction-level advisory lock, so instances starting at once
    migrate one after another (the later ones find nothing to do). A database holding a newer
    version of a component raises ``StoreVersionError`` and is left as it was.

Connections:
    A pool (``min_size`` to ``max_size`` connections; a call waits up to ``timeout`` seconds
    for a free one) runs every read and write; each write is one transaction. A turn holds its
    conversation's advisory lock on a connection of a second pool (``max_locks``), since a
    session-level lock lives as long as its connection: when the holder dies its connection
    closes and the server releases the lock. One more connection LISTENs for wake-ups
    (``subscribe``).

Example:
    >>> async with PostgresDatabase("postgresql://app@db/glove") as db:  # doctest: +SKIP
    ...     store = PostgresStore(db, "session-1")
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

from glove_core import redaction
from glove_core._postgres_locks import LockPool, Notifications, lock_key
from glove_core._schema_steps import check_schema
from glove_core.abort import AbortSignal
from glove_core.errors import GloveStateError, StoreError, StoreVersionError
from glove_core.resources import AsyncResource

try:
    import psycopg
    from psycopg_pool import AsyncConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - the tests install the extra
    raise ImportError(
        "the PostgreSQL backends need the postgres extra: pip install 'glove-agents[postgres]' "
        "(psycopg 3 and psycopg-pool)"
    ) from exc

__all__ = [
    "POSTGRES_POOL_TIMEOUT",
    "Connection",
    "PostgresDatabase",
    "PostgresSchema",
    "redact_url",
]

_T = TypeVar("_T")

Connection = psycopg.AsyncConnection[tuple[object, ...]]
"""A pooled connection, as the functions given to ``read`` and ``write`` receive it."""

SCHEMA_TABLE = "glove_store_schema"
POSTGRES_POOL_TIMEOUT = 30.0
"""Seconds a call waits for a free pooled connection by default."""

_MIGRATION_LOCK = "glove.migrations"


@dataclass(frozen=True)
class PostgresSchema:
    """One component's tables on PostgreSQL: a name and its numbered migrations.

    ``migrations[0]`` creates the component (version 1), ``migrations[n]`` takes it from
    version ``n`` to ``n + 1``. Append new steps; never edit a released one.

    Raises:
        ValueError: an empty name, no migrations, or a step that is not a non-empty tuple of
            SQL strings.
    """

    name: str
    migrations: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        check_schema(self.name, self.migrations)

    @property
    def version(self) -> int:
        """The version this schema writes and reads: the number of migrations."""
        return len(self.migrations)


def redact_url(url: str) -> str:
    """``url`` without its password, for messages and logs (the user name and the other
    query parameters kept: they say which database; ``glove_core.redaction`` decides)."""
    return redaction.redact_url(url, keep_user=True, keep_query=True)


class PostgresDatabase(AsyncResource):
    """A process's connections to one PostgreSQL database, shared by every component.

    Args:
        url: a ``postgresql://`` URL (or libpq key=value string).
        min_size: pooled connections kept open (0 or more).
        max_size: most pooled connections at once (1 or more, at least ``min_size``).
        timeout: seconds a call waits for a free pooled connection before ``StoreError``.
        max_locks: most turns holding a conversation lock at once in this process (each
            holds a connection of its own while the turn runs).

    Raises:
        ValueError: a size or timeout out of range (the message names it).
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = POSTGRES_POOL_TIMEOUT,
        max_locks: int = 100,
    ) -> None:
        if not isinstance(url, str) or not url.strip():
            raise ValueError("url must be a non-empty postgresql:// URL")
        if min_size < 0:
            raise ValueError(f"min_size must be 0 or more, got {min_size}")
        if max_size < 1 or max_size < min_size:
            raise ValueError(f"max_size must be 1 or more and at least min_size, got {max_size}")
        if not timeout > 0:
            raise ValueError(f"timeout must be more than 0 seconds, got {timeout}")
        if max_locks < 1:
            raise ValueError(f"max_locks must be 1 or more, got {max_locks}")
        self._url = url
        self.name = redact_url(url)
        """The URL without its password."""
        self._timeout = float(timeout)
        self._pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            open=False,
            name="glove",
            kwargs={"autocommit": True},
        )
        self._locks = LockPool(url, max_locks, self.name, self._timeout)
        self._notifications = Notifications(url, self.name)
        self._migrated: set[str] = set()
        self._state = "new"
        self.round_trips = 0
        """Calls to ``read`` and ``write`` so far (each one transaction or statement batch)."""

    @property
    def closed(self) -> bool:
        """True after ``aclose()``."""
        return self._state == "closed"

    async def open(self) -> PostgresDatabase:
        """Open the pool now and check the server answers (otherwise the first call does).

        Raises:
            StoreError: the server cannot be reached in ``timeout`` seconds.
        """
        if self._state == "closed":
            raise GloveStateError(f"{self!r} is closed; create a new one")
        if self._state == "new":
            self._state = "open"
            await self._pool.open()
            try:
                await self._pool.wait(timeout=self._timeout)
            except PoolTimeout:
                await self.aclose()
                raise StoreError(
                    f"PostgreSQL database {self.name} did not answer within {self._timeout:g} "
                    "s: check the URL, that the server runs and accepts this user"
                ) from None
        return self

    async def migrate(self, schema: PostgresSchema) -> None:
        """Bring ``schema``'s component up to date (once per database object).

        Raises:
            StoreVersionError: the database has a newer version of the component.
        """
        if schema.name in self._migrated:
            return

        async def step(conn: Connection) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(_MIGRATION_LOCK),))
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (component TEXT PRIMARY KEY, "
                "version INTEGER NOT NULL)"
            )
            cursor = await conn.execute(
                f"SELECT version FROM {SCHEMA_TABLE} WHERE component = %s", (schema.name,)
            )
            row = await cursor.fetchone()
            found = 0 if row is None else int(str(row[0]))
            if found > schema.version:
                error = StoreVersionError(self.name, found, schema.version)
                error.add_note(f"the newer tables are those of component {schema.name!r}")
                raise error
            for migration in schema.migrations[found:]:
                for statement in migration:
                    await conn.execute(statement)
            await conn.execute(
                f"INSERT INTO {SCHEMA_TABLE} (component, version) VALUES (%s, %s) "
                "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                (schema.name, schema.version),
            )

        await self._run(step, transaction=True)
        self._migrated.add(schema.name)

    async def read(self, fn: Callable[[Connection], Awaitable[_T]]) -> _T:
        """Run ``fn`` on a pooled connection in autocommit mode."""
        return await self._run(fn, transaction=False)

    async def write(self, fn: Callable[[Connection], Awaitable[_T]]) -> _T:
        """Run ``fn`` in one transaction: committed when it returns, rolled back when it
        raises (anything)."""
        return await self._run(fn, transaction=True)

    async def _run(self, fn: Callable[[Connection], Awaitable[_T]], *, transaction: bool) -> _T:
        if self._state != "open":
            await self.open()
        self.round_trips += 1
        try:
            async with self._pool.connection() as conn:
                if not transaction:
                    return await fn(conn)
                async with conn.transaction():
                    return await fn(conn)
        except PoolTimeout:
            raise StoreError(
                f"no connection to PostgreSQL database {self.name} came free within "
                f"{self._timeout:g} s: raise the pool size (--database-pool-max) or the "
                "timeout (--database-timeout)"
            ) from None
        except psycopg.OperationalError as exc:
            raise StoreError(f"PostgreSQL database {self.name}: {exc}") from exc

    def lock(
        self,
        name: str,
        signal: AbortSignal,
        wait_limit: float | None,
        on_timeout: Callable[[float], Exception],
    ) -> AbstractAsyncContextManager[None]:
        """Hold the session-level advisory lock named ``name`` while the block runs, on a
        connection of its own: released when the block ends or the holder dies.

        Raises:
            on_timeout(waited): still held elsewhere after ``wait_limit`` seconds.
            AbortError: ``signal`` fired while waiting.
        """
        return self._locks.hold(lock_key(name), signal, wait_limit, on_timeout)

    async def notify(self, conn: Connection, channel: str, payload: str) -> None:
        """Send ``payload`` on ``channel`` inside ``conn``'s transaction (delivered at
        commit, to every process that ``subscribe``\\ d)."""
        await conn.execute("SELECT pg_notify(%s, %s)", (channel, payload))

    @asynccontextmanager
    async def subscribe(
        self, channel: str, payload: str, callback: Callable[[], None]
    ) -> AsyncIterator[None]:
        """Call ``callback`` whenever ``payload`` arrives on ``channel`` while the block runs
        (and once after the listening connection was lost and came back, since
        notifications sent meanwhile are gone)."""
        await self._notifications.add(channel, payload, callback)
        try:
            yield
        finally:
            self._notifications.remove(channel, payload, callback)

    async def aclose(self) -> None:
        """Close every connection. Idempotent; later calls raise ``GloveStateError``."""
        was = self._state
        self._state = "closed"
        if was == "open":
            await self._notifications.aclose()
            await self._locks.aclose()
            await self._pool.close()

    async def _enter(self) -> None:
        await self.open()

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.name!r})"
