"""Which database the headless server keeps its sessions in (internal).

``session_storage`` picks the ``SessionStorage`` for ``HeadlessServer``'s arguments: a SQLite
file (one instance), or a PostgreSQL database shared by any number of instances
(``database_url=``, with its pool sizes and timeouts). The PostgreSQL parts are imported only
when asked for, so a server on SQLite needs no PostgreSQL driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from glove_mcp.server.session_storage import SessionStorage, SqliteSessionStorage

__all__ = ["DatabaseOptions", "session_storage", "storage_closer", "storage_opener"]


@dataclass(frozen=True)
class DatabaseOptions:
    """The PostgreSQL connection settings of ``HeadlessServer(database_url=)``."""

    url: str
    pool_min: int = 1
    """Pooled connections kept open."""
    pool_max: int = 10
    """Most pooled connections at once (requests beyond wait up to ``timeout``)."""
    timeout: float = 30.0
    """Seconds a call waits for a free pooled connection, or to connect at start-up."""
    max_locks: int = 100
    """Most turns running at once on this instance (each holds a connection for its lock)."""

    def __post_init__(self) -> None:
        if not self.url.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "database_url must be a postgresql:// URL (e.g. "
                "postgresql://user:password@host/glove)"
            )
        if self.pool_min < 0:
            raise ValueError(f"database_pool_min must be 0 or more, got {self.pool_min}")
        if self.pool_max < max(1, self.pool_min):
            raise ValueError(
                f"database_pool_max must be 1 or more and at least database_pool_min "
                f"({self.pool_min}), got {self.pool_max}"
            )
        if not self.timeout > 0:
            raise ValueError(f"database_timeout must be more than 0 seconds, got {self.timeout}")
        if self.max_locks < 1:
            raise ValueError(f"database_max_locks must be 1 or more, got {self.max_locks}")


def session_storage(db_path: str | None, database: DatabaseOptions | None) -> SessionStorage:
    """The storage for a SQLite file or a PostgreSQL database (exactly one of them).

    Raises:
        ValueError: both or neither were given.
    """
    if (db_path is None) == (database is None):
        raise ValueError("give the headless server either db_path (SQLite) or database_url=")
    if database is None:
        assert db_path is not None
        return SqliteSessionStorage(db_path)
    from glove_core.postgres import PostgresDatabase
    from glove_mcp.server._postgres_sessions import PostgresSessionStorage

    return PostgresSessionStorage(
        PostgresDatabase(
            database.url,
            min_size=database.pool_min,
            max_size=database.pool_max,
            timeout=database.timeout,
            max_locks=database.max_locks,
        )
    )


async def storage_opener(storage: SessionStorage) -> None:
    """Check the storage at start-up, where it can be checked (a database server)."""
    opener = getattr(storage, "open", None)
    if opener is not None:
        await opener()


async def storage_closer(storage: SessionStorage) -> None:
    """Close what the storage holds (a database pool), if anything."""
    closer = getattr(storage, "aclose", None)
    if closer is not None:
        await closer()
