"""Schema, migrations and connections of ``SqliteStore`` files (internal).

The schema version lives in table ``glove_store_schema``. Opening a file checks, before writing
anything, that it is a SQLite database and that its version is not newer than ``SCHEMA_VERSION``;
then it switches the file to WAL and applies the missing migrations in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TypeVar

from glove_core.errors import StoreCorruptError, StoreError, StoreNotFoundError, StoreVersionError

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "SCHEMA_VERSION",
    "connect",
    "now",
    "transaction",
    "translate",
    "use_wal",
    "with_existing_file",
]

_T = TypeVar("_T")

# Each entry migrates the schema from version N to N + 1 (index 0: empty file → version 1).
# Append new entries; never edit a released one.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE glove_sessions (
            session_id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            turns INTEGER NOT NULL DEFAULT 0,
            tasks TEXT NOT NULL DEFAULT '[]'
        )""",
        """CREATE TABLE glove_messages (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sender TEXT NOT NULL,
            is_compaction INTEGER NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX glove_messages_by_session ON glove_messages (session_id, seq)",
        """CREATE TABLE glove_permissions (
            session_id TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            input_key TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, tool_name, input_key)
        )""",
        """CREATE TABLE glove_inbox (
            session_id TEXT NOT NULL,
            item_id TEXT NOT NULL,
            data TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (session_id, item_id)
        )""",
        "CREATE INDEX glove_inbox_by_item ON glove_inbox (item_id)",
    ),
)

SCHEMA_VERSION = len(_MIGRATIONS)
"""The store schema version this glove writes and reads (older files are migrated forward)."""

DEFAULT_BUSY_TIMEOUT = 10.0
"""Seconds a write waits for another connection's write before failing."""

_CORRUPT_CODES = frozenset({sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT})


def now() -> str:
    """The current time, ISO 8601 in UTC."""
    return datetime.now(UTC).isoformat()


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception.

    IMMEDIATE takes the write lock up front, so a busy writer is waited for (busy timeout)
    instead of failing on a read-to-write upgrade.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def connect(path: str, busy_timeout: float, *, create: bool) -> sqlite3.Connection:
    """Open ``path``, check it is a glove store this version can read, migrate it forward.

    Nothing is written to the file before both checks pass.
    """
    if not create and not os.path.exists(path):
        raise StoreNotFoundError(path)
    # mode=rw: an outside helper must never create a file (a typo'd path stays an error).
    target = path if create else f"file:{urllib.parse.quote(path)}?mode=rw"
    try:
        conn = sqlite3.connect(
            target,
            timeout=busy_timeout,
            isolation_level=None,
            check_same_thread=False,
            uri=not create,
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open store file {path!r}: {exc}") from exc
    try:
        version = _schema_version(conn, path)
        if version > SCHEMA_VERSION:
            raise StoreVersionError(path, version, SCHEMA_VERSION)
        # WAL lets readers run while one connection writes; NORMAL sync is durable against a
        # process crash (only an OS crash can lose the last commits).
        use_wal(conn, busy_timeout)
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            _migrate(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise translate(exc, path) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch the file to WAL once. Several connections opening a new file at the same moment
    race for this switch, and SQLite answers the losers "database is locked" at once, without
    its busy handler; they retry until the winner is done (the mode is then already WAL)."""
    deadline = time.monotonic() + max(busy_timeout, 0.1)
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)  # this runs in a worker thread, never on the event loop


def _schema_version(conn: sqlite3.Connection, path: str) -> int:
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'glove_store_schema'"
    ).fetchone()
    if table is None:
        return 0
    rows = conn.execute("SELECT version FROM glove_store_schema").fetchall()
    if len(rows) != 1 or not isinstance(rows[0][0], int):
        raise StoreCorruptError(path, f"the schema version table holds {rows!r}")
    version: int = rows[0][0]
    return version


def _migrate(conn: sqlite3.Connection, path: str) -> None:
    with transaction(conn):
        # Read again under the write lock: another process may have migrated meanwhile.
        current = _schema_version(conn, path)
        if current > SCHEMA_VERSION:
            raise StoreVersionError(path, current, SCHEMA_VERSION)
        if current == 0:
            conn.execute("CREATE TABLE glove_store_schema (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO glove_store_schema (version) VALUES (0)")
        for version in range(current, SCHEMA_VERSION):
            for statement in _MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute("UPDATE glove_store_schema SET version = ?", (SCHEMA_VERSION,))


def translate(exc: sqlite3.Error, path: str) -> StoreError:
    """The typed error for a sqlite3 error on ``path`` (damaged file, lock timeout, other)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code in _CORRUPT_CODES:
        return StoreCorruptError(path, str(exc))
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(
            f"store file {path!r} stayed locked by another connection longer than the busy "
            "timeout; retry, or raise SqliteStore(busy_timeout=)"
        )
    return StoreError(f"store file {path!r}: {type(exc).__name__}: {exc}")


def with_existing_file(path: str | os.PathLike[str], fn: Callable[[sqlite3.Connection], _T]) -> _T:
    """Run ``fn`` on a short-lived connection to an existing store file, then close it."""
    file = os.fspath(path)
    conn = connect(file, DEFAULT_BUSY_TIMEOUT, create=False)
    try:
        return fn(conn)
    except sqlite3.Error as exc:
        raise translate(exc, file) from exc
    finally:
        conn.close()
