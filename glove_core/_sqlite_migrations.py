"""Component schemas and their migrations, for the SQLite layer (internal; public names are
re-exported by ``glove_core.sqlite``).

Table ``glove_store_schema`` holds one ``(component, version)`` row per component. Every
check reads only, so a refused file is left byte for byte as it was; ``migrate`` then applies
the missing steps and records the new version in one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from glove_core._schema_steps import check_schema
from glove_core.errors import StoreCorruptError, StoreVersionError

__all__ = ["SCHEMA_TABLE", "SqliteSchema", "migrate", "needs_migration", "transaction"]

SCHEMA_TABLE = "glove_store_schema"
"""The table recording each component's schema version, one ``(component, version)`` row."""

# Before this layer, the schema table held a single ``version`` row: the conversation store's.
_PRE_LAYER_COMPONENT = "glove_core.conversations"

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
        check_schema(self.name, self.migrations)

    @property
    def version(self) -> int:
        """The version this schema writes and reads: the number of migrations."""
        return len(self.migrations)


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


def needs_migration(conn: sqlite3.Connection, path: str, schema: SqliteSchema) -> bool:
    """Whether opening must write; raises when the file must be refused. Reads only.

    Raises:
        StoreCorruptError: the schema table or the component's unversioned tables are damaged.
        StoreVersionError: the file has a newer version of the component.
    """
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


def migrate(conn: sqlite3.Connection, path: str, schema: SqliteSchema) -> None:
    """Bring the component to ``schema.version`` in one transaction (all steps or none)."""
    with transaction(conn):
        # Read again under the write lock: another connection may have migrated meanwhile.
        if not needs_migration(conn, path, schema):
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
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception."""
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
