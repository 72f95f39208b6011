"""The one SQLite layer under every glove table: migrations, busy timeout, connection model.

``SqliteStore`` (conversations), ``SqliteEventQueue`` (outside events) and ``glove_mcp``'s
``SqliteMcpAdapter`` (active servers) may all live in one file. Each is a *component*: it
describes its tables as a ``SqliteSchema`` — a name and numbered migrations — and reaches the
file only through a ``SqliteDatabase``.

Migrations:
    Table ``glove_store_schema`` records one row per component: ``(component, version)``.
    Opening a file first checks, without writing anything, that it is a SQLite database, that
    the schema table is intact and that the component's recorded version is not newer than its
    schema (``StoreCorruptError`` / ``StoreVersionError`` otherwise; the file is left as it was).
    It then switches the file to WAL and applies the missing migrations, in order, in one
    ``BEGIN IMMEDIATE`` transaction that also records the new version — all of them or none.
    Components are independent: a newer version of one component's tables does not stop an
    older glove from opening another's.

    Files from before this layer are migrated on first open: their ``glove_store_schema`` held
    one ``version`` row, the conversation store's; tables made by ``CREATE TABLE IF NOT EXISTS``
    (``glove_events``, ``glove_mcp_active``) are named in ``SqliteSchema.unversioned_tables``,
    checked against migration 1 and recorded as version 1.

Connection model:
    One connection per ``SqliteDatabase`` (one per component object), opened lazily by the
    first call, in WAL mode with ``synchronous = NORMAL`` (readers never wait for the writer;
    durable against a process crash, only an OS crash can lose the last commits). Every call
    runs in a worker thread (``asyncio.to_thread``), one at a time per connection, so no
    sqlite3 call runs on the event loop. Every write is one ``BEGIN IMMEDIATE`` transaction
    (``write``); a writer waits up to the busy timeout, ``SQLITE_BUSY_TIMEOUT`` seconds unless
    given, for another connection's write. A connection per call would pay for opening and
    checking the file (about 1 ms) on every call; see ``bench/store.py``.

Example:
    >>> schema = SqliteSchema(  # doctest: +SKIP
    ...     "my_app.notes", migrations=(("CREATE TABLE my_notes (id TEXT PRIMARY KEY)",),)
    ... )
    >>> async with SqliteDatabase("chat.db", schema) as db:  # doctest: +SKIP
    ...     await db.write(lambda conn: conn.execute("INSERT INTO my_notes VALUES ('n1')"))
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal, TypeVar

from glove_core.errors import (
    GloveStateError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
    StoreVersionError,
)

__all__ = [
    "SCHEMA_TABLE",
    "SQLITE_BUSY_TIMEOUT",
    "SqliteDatabase",
    "SqliteSchema",
]

_T = TypeVar("_T")

SQLITE_BUSY_TIMEOUT = 10.0
"""Seconds a write waits for another connection's write before failing (every component)."""

SCHEMA_TABLE = "glove_store_schema"
"""The table recording each component's schema version, one ``(component, version)`` row."""

# Before this layer, the schema table held a single ``version`` row: the conversation store's.
_PRE_LAYER_COMPONENT = "glove_core.conversations"

_CORRUPT_CODES = frozenset({sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT})

_Layout = Literal["missing", "pre-layer", "current"]


@dataclass(frozen=True)
class SqliteSchema:
    """One component's tables: a name and its numbered migrations.

    ``migrations[0]`` takes a file without the component to version 1, ``migrations[n]`` from
    version ``n`` to ``n + 1``. Append new steps; never edit a released one (files in the wild
    have run it).

    Args:
        name: the component's name in the schema table; unique per file, never renamed
            (e.g. ``"glove_core.conversations"``).
        migrations: the steps, each a tuple of SQL statements run in order. Plain
            ``CREATE TABLE``: the layer runs a step only when the recorded version says so.
        unversioned_tables: tables an older glove created without recording a version. When
            the file has them but no row for ``name``, they are checked against migration 1
            and recorded as version 1 instead of being created.

    Raises:
        ValueError: an empty name, no migrations, or a step that is not a non-empty tuple of
            SQL strings.
    """

    name: str
    migrations: tuple[tuple[str, ...], ...]
    unversioned_tables: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.migrations, tuple) or not self.migrations:
            raise ValueError(f"schema {self.name!r}: migrations must be a non-empty tuple")
        for number, step in enumerate(self.migrations, start=1):
            if (
                not isinstance(step, tuple)
                or not step
                or not all(isinstance(s, str) and s.strip() for s in step)
            ):
                raise ValueError(
                    f"schema {self.name!r}: migration {number} must be a non-empty tuple of SQL "
                    f"statements, got {step!r}"
                )

    @property
    def version(self) -> int:
        """The version this schema writes and reads: the number of migrations."""
        return len(self.migrations)


class SqliteDatabase:
    """One component's connection to a SQLite file, opened lazily, used from worker threads.

    Use it as an async context manager, or call ``aclose()``; a database that is never closed
    closes its connection when it is garbage collected.

    Args:
        path: the file; created when missing unless ``create=False``. ``":memory:"`` gives a
            private in-memory database.
        schema: the component's tables, migrated forward on open.
        busy_timeout: seconds a write waits for another connection's write before raising
            ``StoreError``.
        create: False to refuse a missing file with ``StoreNotFoundError`` (for helpers that
            act on an existing file, where a typo'd path must stay an error).
        closed_error: builds the exception raised by calls after ``aclose()``; default a
            ``GloveStateError`` naming the file and component.

    Raises:
        ValueError: a negative ``busy_timeout``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        schema: SqliteSchema,
        *,
        busy_timeout: float = SQLITE_BUSY_TIMEOUT,
        create: bool = True,
        closed_error: Callable[[], Exception] | None = None,
    ) -> None:
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must be 0 or more seconds, got {busy_timeout}")
        self._path = os.fspath(path)
        self._schema = schema
        self._busy_timeout = float(busy_timeout)
        self._create = create
        message = f"{self!r} is closed; create a new one to use the file"
        self._closed_error = closed_error or (lambda: GloveStateError(message))
        self._conn: sqlite3.Connection | None = None
        self._finalizer: weakref.finalize[[], SqliteDatabase] | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    @property
    def schema(self) -> SqliteSchema:
        """The component's schema."""
        return self._schema

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for another connection's write."""
        return self._busy_timeout

    @property
    def closed(self) -> bool:
        """True after ``aclose()``."""
        return self._closed

    # -- calls ------------------------------------------------------------------------------

    async def open(self) -> None:
        """Open and migrate the file now (otherwise the first call does), so a bad file fails
        early.

        Raises:
            StoreCorruptError: the file is not a SQLite database or is damaged.
            StoreVersionError: the file has a newer version of this component's tables.
            StoreNotFoundError: ``create=False`` and there is no file.
        """
        await asyncio.to_thread(self.read_sync, _nothing)

    async def read(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``fn`` on the connection in a worker thread (autocommit: each statement sees the
        latest commit). sqlite3 errors become ``StoreError`` subclasses."""
        return await asyncio.to_thread(self.read_sync, fn)

    async def write(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction in a worker thread: committed when
        it returns, rolled back when it raises (anything)."""
        return await asyncio.to_thread(self.write_sync, fn)

    def read_sync(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """``read``, blocking: for worker threads and scripts, never the event loop."""
        with self._lock:
            conn = self._connection()
            try:
                return fn(conn)
            except sqlite3.Error as exc:
                raise _translate(exc, self._path, self._busy_timeout) from exc

    def write_sync(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """``write``, blocking: for worker threads and scripts, never the event loop."""
        with self._lock:
            conn = self._connection()
            try:
                with _transaction(conn):
                    return fn(conn)
            except sqlite3.Error as exc:
                raise _translate(exc, self._path, self._busy_timeout) from exc

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise self._closed_error()
        if self._conn is None:
            conn = _connect(
                self._path, self._schema, busy_timeout=self._busy_timeout, create=self._create
            )
            self._conn = conn
            # Owners that never close (a queue handed to EventsConfig) still release the file.
            self._finalizer = weakref.finalize(self, conn.close)
        return self._conn

    # -- lifecycle --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the connection (waiting for a running call). Idempotent; later calls raise
        ``closed_error()``."""
        await asyncio.to_thread(self.close_sync)

    def close_sync(self) -> None:
        """``aclose``, blocking: for worker threads and scripts."""
        with self._lock:
            self._closed = True
            if self._finalizer is not None:
                self._finalizer()  # closes the connection, once
                self._finalizer = None
            self._conn = None

    async def __aenter__(self) -> SqliteDatabase:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"SqliteDatabase({self._path!r}, {self._schema.name!r})"


def _nothing(conn: sqlite3.Connection) -> None:
    return None


# --- opening and migrating -----------------------------------------------------------------


def _connect(
    path: str | os.PathLike[str],
    schema: SqliteSchema,
    *,
    busy_timeout: float = SQLITE_BUSY_TIMEOUT,
    create: bool = True,
) -> sqlite3.Connection:
    """Open ``path``, check it, migrate ``schema`` forward; blocking (worker threads only).

    The connection is in autocommit mode (``isolation_level=None``) and may be used from any
    one thread at a time.

    Raises:
        StoreNotFoundError: ``create=False`` and there is no file (none is created).
        StoreCorruptError: the file is not a SQLite database, or its schema table or this
            component's unversioned tables are damaged; nothing was written.
        StoreVersionError: the file has a newer version of this component; nothing was written.
        StoreError: the file cannot be opened, or stayed locked past the busy timeout.
    """
    file = os.fspath(path)
    if not create and not os.path.exists(file):
        raise StoreNotFoundError(file)
    # mode=rw: a helper acting on an existing file must never create one.
    target = file if create else f"file:{urllib.parse.quote(file)}?mode=rw"
    try:
        conn = sqlite3.connect(
            target,
            timeout=busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            uri=not create,
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open SQLite file {file!r}: {exc}") from exc
    try:
        # Every check before the first write, so a refused file stays byte for byte the same.
        needs_migration = _needs_migration(conn, file, schema)
        _use_wal(conn, busy_timeout)
        conn.execute("PRAGMA synchronous = NORMAL")
        if needs_migration:
            _migrate(conn, file, schema)
    except sqlite3.Error as exc:
        conn.close()
        raise _translate(exc, file, busy_timeout) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _read_versions(conn: sqlite3.Connection, path: str) -> tuple[_Layout, dict[str, int]]:
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info({SCHEMA_TABLE})")]
    if not columns:
        return "missing", {}
    if columns == ["version"]:
        rows = conn.execute(f"SELECT version FROM {SCHEMA_TABLE}").fetchall()
        if len(rows) != 1 or not _is_version(rows[0][0]):
            raise StoreCorruptError(path, f"the schema version table holds {rows!r}")
        return "pre-layer", {_PRE_LAYER_COMPONENT: rows[0][0]}
    if columns == ["component", "version"]:
        rows = conn.execute(f"SELECT component, version FROM {SCHEMA_TABLE}").fetchall()
        if not all(isinstance(name, str) and _is_version(version) for name, version in rows):
            raise StoreCorruptError(path, f"the schema version table holds {rows!r}")
        return "current", {name: version for name, version in rows}
    raise StoreCorruptError(
        path,
        f"table {SCHEMA_TABLE} has columns {columns!r}, expected ['component', 'version'] "
        "(damaged, or written by a newer glove)",
    )


def _is_version(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _needs_migration(conn: sqlite3.Connection, path: str, schema: SqliteSchema) -> bool:
    """Whether opening must write; raises when the file must be refused. Reads only."""
    layout, versions = _read_versions(conn, path)
    found = versions.get(schema.name)
    if found is not None and found > schema.version:
        error = StoreVersionError(path, found, schema.version)
        error.add_note(f"the newer tables are those of component {schema.name!r}")
        raise error
    if found is None:
        _check_unversioned(conn, path, schema)
    return layout != "current" or found is None or found < schema.version


def _check_unversioned(conn: sqlite3.Connection, path: str, schema: SqliteSchema) -> bool:
    """True when the file has the schema's unversioned tables, shaped as migration 1 makes
    them; raises when only some exist or one has another shape."""
    if not schema.unversioned_tables:
        return False
    present = [t for t in schema.unversioned_tables if _columns(conn, t)]
    if not present:
        return False
    if len(present) != len(schema.unversioned_tables):
        missing = sorted(set(schema.unversioned_tables) - set(present))
        raise StoreCorruptError(
            path, f"component {schema.name!r} has tables {present!r} but not {missing!r}"
        )
    expected = _columns_after_first_migration(schema)
    for table in present:
        if _columns(conn, table) != expected.get(table):
            raise StoreCorruptError(
                path,
                f"table {table!r} exists but is not the one component {schema.name!r} creates",
            )
    return True


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    quoted = '"' + table.replace('"', '""') + '"'
    # (name, type, not null, default, primary key position) of each column.
    return [tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({quoted})")]


def _columns_after_first_migration(schema: SqliteSchema) -> dict[str, list[tuple[object, ...]]]:
    scratch = sqlite3.connect(":memory:")
    try:
        for statement in schema.migrations[0]:
            scratch.execute(statement)
        return {table: _columns(scratch, table) for table in schema.unversioned_tables}
    finally:
        scratch.close()


def _migrate(conn: sqlite3.Connection, path: str, schema: SqliteSchema) -> None:
    with _transaction(conn):
        # Read again under the write lock: another connection may have migrated meanwhile.
        if not _needs_migration(conn, path, schema):
            return
        layout, versions = _read_versions(conn, path)
        if layout != "current":
            if layout == "pre-layer":
                conn.execute(f"DROP TABLE {SCHEMA_TABLE}")
            conn.execute(
                f"CREATE TABLE {SCHEMA_TABLE} (component TEXT PRIMARY KEY, "
                "version INTEGER NOT NULL)"
            )
            conn.executemany(f"INSERT INTO {SCHEMA_TABLE} VALUES (?, ?)", versions.items())
        found = versions.get(schema.name)
        if found is None:
            found = 1 if _check_unversioned(conn, path, schema) else 0
        for step in schema.migrations[found:]:
            for statement in step:
                conn.execute(statement)
        conn.execute(
            f"INSERT INTO {SCHEMA_TABLE} (component, version) VALUES (?, ?) "
            "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
            (schema.name, schema.version),
        )


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    # IMMEDIATE takes the write lock up front, so a busy writer is waited for (busy timeout)
    # instead of failing on a read-to-write upgrade.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch the file to WAL once. Several connections opening a new file at the same moment
    race for this switch, and SQLite answers the losers "database is locked" at once, without
    its busy handler; they retry until the winner is done (the mode is then already WAL)."""
    deadline = time.monotonic() + max(busy_timeout, 0.1)
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() not in ("wal", "memory"):
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)  # this runs in a worker thread, never on the event loop


def _translate(exc: sqlite3.Error, path: str, busy_timeout: float) -> StoreError:
    """The typed error for a sqlite3 error on ``path`` (damaged file, lock timeout, other)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code in _CORRUPT_CODES:
        return StoreCorruptError(path, str(exc))
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(
            f"SQLite file {path!r} stayed locked by another connection longer than the busy "
            f"timeout ({busy_timeout:g} s); retry, or pass a larger busy_timeout="
        )
    return StoreError(f"SQLite file {path!r}: {type(exc).__name__}: {exc}")
