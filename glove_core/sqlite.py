"""The one SQLite layer under every glove table: migrations, busy timeout, connection model.

``SqliteStore`` (conversations), ``SqliteEventQueue`` (outside events) and ``glove_mcp``'s
``SqliteMcpAdapter`` (active servers) may all live in one file. Each is a *component*: it
describes its tables as a ``SqliteSchema`` — a name and numbered migrations — and reaches the
file only through a ``SqliteDatabase``.

Migrations:
    Table ``glove_store_schema`` records one row per component: ``(component, version)``.
    Opening a file first checks, without writing anything, that it is a SQLite database, that
    the schema table is intact, that the component's recorded version is not newer than its
    schema and that no page is damaged (``PRAGMA quick_check``); ``StoreCorruptError`` /
    ``StoreVersionError`` otherwise, and the file is left as it was.

    The page check reads the whole file, so it runs once per file per process and again only
    when the file changed behind this process's back: a file that passed it is remembered by
    its identity (device, inode) with its size, modification and change times, refreshed when
    this process closes its connection (its own writes, checkpointed then, are not damage).
    Any other change — another process's writes, a copy over it, a stray ``dd`` — changes
    those times, so the next open checks again; a damaged file is never remembered, so it is
    refused at every open; and any read that meets damage (``SQLITE_CORRUPT``) forgets the
    file. See ``docs/performance.md`` for what this trades.
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
from collections.abc import Callable
from typing import TypeVar

from glove_core._sqlite_migrations import (
    SCHEMA_TABLE,
    SqliteSchema,
    migrate,
    needs_migration,
    transaction,
)
from glove_core.errors import GloveStateError, StoreCorruptError, StoreError, StoreNotFoundError
from glove_core.resources import AsyncResource

__all__ = [
    "SCHEMA_TABLE",
    "SQLITE_BUSY_TIMEOUT",
    "SqliteDatabase",
    "SqliteSchema",
]

_T = TypeVar("_T")

SQLITE_BUSY_TIMEOUT = 10.0
"""Seconds a write waits for another connection's write before failing (every component)."""

_CORRUPT_CODES = frozenset({sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT})


class _CheckedFiles:
    """The files whose pages this process found intact, and the state each was left in.

    Process-wide on purpose: the point is that a second store object (a new request, a
    reopened session) on an unchanged file does not read the whole file again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[tuple[int, int], tuple[int, int, int]] = {}

    @staticmethod
    def _stat(path: str) -> tuple[tuple[int, int], tuple[int, int, int]] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino), (st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def trusted(self, path: str) -> bool:
        """Whether ``path`` passed the check in this process and has not changed since."""
        found = self._stat(path)
        if found is None:
            return False
        with self._lock:
            return self._states.get(found[0]) == found[1]

    def remember(self, path: str) -> None:
        """``path`` is intact as it is now (just checked, or changed only by this process)."""
        found = self._stat(path)
        if found is not None:
            with self._lock:
                self._states[found[0]] = found[1]

    def forget(self, path: str) -> None:
        """Check ``path`` again at its next open (a read met damage)."""
        found = self._stat(path)
        if found is not None:
            with self._lock:
                self._states.pop(found[0], None)


_CHECKED = _CheckedFiles()


class SqliteDatabase(AsyncResource):
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
        owner: what uses this database, as its messages name it (e.g. the store's repr);
            after ``aclose()`` calls raise ``GloveStateError`` saying ``owner`` is closed.
        closed_error: builds that exception instead (a package with errors of its own).
        check_pages: run SQLite's ``quick_check`` when the connection opens (it reads the
            whole file: about 0.7 ms per MB), unless this process checked the file already
            and it has not changed since but through this process (see the module
            docstring). False skips it altogether: only where this process has checked the
            file already, as the headless server does once for all its sessions.

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
        owner: str | None = None,
        closed_error: Callable[[], Exception] | None = None,
        check_pages: bool = True,
    ) -> None:
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must be 0 or more seconds, got {busy_timeout}")
        self._path = os.fspath(path)
        self._schema = schema
        self._busy_timeout = float(busy_timeout)
        self._create = create
        self._check_pages = check_pages
        message = f"{owner or repr(self)} is closed; create a new one to use the file"
        self._closed_error = closed_error or (lambda: GloveStateError(message))
        self._conn: sqlite3.Connection | None = None
        self._intact = False  # the page check passed (or was trusted) when the file opened
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
                with transaction(conn):
                    return fn(conn)
            except sqlite3.Error as exc:
                raise _translate(exc, self._path, self._busy_timeout) from exc

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise self._closed_error()
        if self._conn is None:
            conn = _connect(
                self._path,
                self._schema,
                busy_timeout=self._busy_timeout,
                create=self._create,
                check_pages=self._check_pages,
            )
            self._conn = conn
            self._intact = self._check_pages
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
                if self._intact:
                    # Checked at open; what changed since is this connection's (and other
                    # SQLite writers') work, checkpointed by the close: not damage.
                    _CHECKED.remember(self._path)
            self._conn = None

    async def _enter(self) -> None:
        await self.open()

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
    check_pages: bool = True,
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
        must_migrate = needs_migration(conn, file, schema)
        if check_pages and not _CHECKED.trusted(file):
            _check_pages(conn, file)
            _CHECKED.remember(file)
        _use_wal(conn, busy_timeout)
        conn.execute("PRAGMA synchronous = NORMAL")
        if must_migrate:
            migrate(conn, file, schema)
    except sqlite3.Error as exc:
        conn.close()
        raise _translate(exc, file, busy_timeout) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _check_pages(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a damaged file at open, before anything is written to it.

    Without this a file with a damaged page opens and takes writes (which may land next to the
    damage and spread it); only a read of that page raises, much later. ``quick_check`` rather
    than ``integrity_check``: it reads every page and checks the b-tree structure, record
    format and free list, which finds a garbled page; it skips only the cross-check of each
    index against its table (an O(N log N) pass on files with many indexes). On a 100 MB store
    file (``bench/sqlite_check.py``) it took 0.65 to 0.85 of ``integrity_check``'s time, about
    0.7 ms per MB from the page cache (more from a cold disk), paid once per connection (one
    per store object, opened lazily), never per call.

    Raises:
        sqlite3.DatabaseError: the check itself hit the damage (translated by the caller).
        StoreCorruptError: the check reported problems.
    """
    rows = conn.execute("PRAGMA quick_check(5)").fetchall()
    problems = [str(row[0]) for row in rows if row and row[0] != "ok"]
    if problems:
        detail = "; ".join(p.replace("\n", " ") for p in problems)
        raise StoreCorruptError(path, f"PRAGMA quick_check found damage: {detail}")


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
        _CHECKED.forget(path)  # the next open reads the whole file again
        return StoreCorruptError(path, str(exc))
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(
            f"SQLite file {path!r} stayed locked by another connection longer than the busy "
            f"timeout ({busy_timeout:g} s); retry, or pass a larger busy_timeout="
        )
    return StoreError(f"SQLite file {path!r}: {type(exc).__name__}: {exc}")
