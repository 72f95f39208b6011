"""The SQLite layer on real files: migrations per component, refusals, connection model."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import sys
import threading
from pathlib import Path

import pytest

from glove_core.errors import (
    GloveStateError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
    StoreVersionError,
)
from glove_core.sqlite import SCHEMA_TABLE, SQLITE_BUSY_TIMEOUT, SqliteDatabase, SqliteSchema


def log_schema(steps: int, name: str = "test.log") -> SqliteSchema:
    """Migration 1 makes table ``log_<name>``; migration n writes n into it, so the table
    shows which migrations ran, how often and in which order."""
    table = "log_" + name.replace(".", "_")
    first = (f"CREATE TABLE {table} (step INTEGER NOT NULL)", f"INSERT INTO {table} VALUES (1)")
    rest = tuple((f"INSERT INTO {table} VALUES ({n})",) for n in range(2, steps + 1))
    return SqliteSchema(name, migrations=(first, *rest))


def read(path: Path, query: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def settle(path: Path) -> bytes:
    """Fold the WAL into the main file and return its bytes."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.read_bytes()


async def test_migrations_are_applied_once_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    for _ in range(2):
        async with SqliteDatabase(path, log_schema(2)):
            pass
    assert read(path, "SELECT step FROM log_test_log ORDER BY rowid") == [(1,), (2,)]
    assert read(path, f"SELECT component, version FROM {SCHEMA_TABLE}") == [("test.log", 2)]

    # A later version appends a step: only that one runs.
    async with SqliteDatabase(path, log_schema(4)):
        pass
    assert read(path, "SELECT step FROM log_test_log ORDER BY rowid") == [
        (n,) for n in (1, 2, 3, 4)
    ]
    assert read(path, f"SELECT version FROM {SCHEMA_TABLE}") == [(4,)]


async def test_many_connections_migrating_one_new_file_at_once_run_each_step_once(
    tmp_path: Path,
) -> None:
    for round_ in range(10):
        path = tmp_path / f"new-{round_}.db"
        databases = [SqliteDatabase(path, log_schema(3)) for _ in range(6)]
        try:
            await asyncio.gather(*(db.open() for db in databases))
        finally:
            for db in databases:
                await db.aclose()
        assert read(path, "SELECT step FROM log_test_log ORDER BY rowid") == [(1,), (2,), (3,)]


async def test_components_keep_separate_versions_in_one_schema_table(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    async with SqliteDatabase(path, log_schema(2, "a")), SqliteDatabase(path, log_schema(3, "b")):
        pass
    rows = read(path, f"SELECT component, version FROM {SCHEMA_TABLE} ORDER BY component")
    assert rows == [("a", 2), ("b", 3)]


async def test_a_failing_migration_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    async with SqliteDatabase(path, log_schema(1)):
        pass
    broken = SqliteSchema(
        "test.log",
        migrations=(
            log_schema(1).migrations[0],
            ("INSERT INTO log_test_log VALUES (2)", "INSERT INTO no_such_table VALUES (1)"),
        ),
    )
    with pytest.raises(StoreError, match="no such table: no_such_table"):
        await SqliteDatabase(path, broken).open()
    assert read(path, "SELECT step FROM log_test_log") == [(1,)]
    assert read(path, f"SELECT version FROM {SCHEMA_TABLE}") == [(1,)]


async def test_a_newer_component_is_refused_and_the_file_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    async with SqliteDatabase(path, log_schema(2, "a")), SqliteDatabase(path, log_schema(1, "b")):
        pass
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE {SCHEMA_TABLE} SET version = 7 WHERE component = 'a'")
    conn.commit()
    conn.close()
    before = settle(path)

    older = SqliteDatabase(path, log_schema(2, "a"))
    with pytest.raises(
        StoreVersionError, match=r"schema version 7.*up to 2.*Upgrade glove"
    ) as info:
        await older.read(lambda conn: None)
    assert (info.value.found, info.value.supported) == (7, 2)
    assert any("'a'" in note for note in info.value.__notes__)
    await older.aclose()
    assert path.read_bytes() == before

    # Another component of the same file is not affected.
    async with SqliteDatabase(path, log_schema(1, "b")) as other:
        assert await other.read(lambda c: c.execute("SELECT step FROM log_b").fetchall()) == [(1,)]


@pytest.mark.parametrize(
    "statements",
    [
        [f"CREATE TABLE {SCHEMA_TABLE} (component TEXT, version INTEGER, extra TEXT)"],
        [
            f"CREATE TABLE {SCHEMA_TABLE} (component TEXT, version INTEGER)",
            f"INSERT INTO {SCHEMA_TABLE} VALUES ('test.log', 'two')",
        ],
        [
            f"CREATE TABLE {SCHEMA_TABLE} (version INTEGER)",
            f"INSERT INTO {SCHEMA_TABLE} VALUES (1), (2)",
        ],
    ],
    ids=["columns", "version-not-a-number", "pre-layer-two-rows"],
)
async def test_a_damaged_schema_table_is_refused_and_the_file_left_untouched(
    tmp_path: Path, statements: list[str]
) -> None:
    path = tmp_path / "g.db"
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreCorruptError, match=r"is not a usable glove store.*left untouched"):
        await SqliteDatabase(path, log_schema(1)).open()
    assert path.read_bytes() == before
    assert names_in(tmp_path) == ["g.db"]


async def test_a_file_that_is_not_a_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database\n" * 100)
    with pytest.raises(StoreCorruptError, match=r"notes\.txt"):
        await SqliteDatabase(path, log_schema(1)).open()
    assert path.read_bytes() == b"not a database\n" * 100
    assert names_in(tmp_path) == ["notes.txt"]


async def test_tables_from_before_the_layer_are_adopted_as_version_1(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS old_items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
    conn.execute("INSERT INTO old_items VALUES ('kept', 1)")
    conn.commit()
    conn.close()
    schema = SqliteSchema(
        "test.items",
        migrations=(
            ("CREATE TABLE old_items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)",),
            ("ALTER TABLE old_items ADD COLUMN note TEXT",),
        ),
        unversioned_tables=("old_items",),
    )
    async with SqliteDatabase(path, schema) as db:
        rows = await db.read(lambda c: c.execute("SELECT id, n, note FROM old_items").fetchall())
    assert rows == [("kept", 1, None)]
    assert read(path, f"SELECT component, version FROM {SCHEMA_TABLE}") == [("test.items", 2)]


async def test_an_unversioned_table_of_another_shape_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "g.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE old_items (something TEXT)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    schema = SqliteSchema(
        "test.items",
        migrations=(("CREATE TABLE old_items (id TEXT PRIMARY KEY)",),),
        unversioned_tables=("old_items",),
    )
    with pytest.raises(StoreCorruptError, match="'old_items' exists but is not the one"):
        await SqliteDatabase(path, schema).open()
    assert path.read_bytes() == before


async def test_a_pre_layer_schema_table_becomes_one_row_per_component(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {SCHEMA_TABLE} (version INTEGER NOT NULL)")
    conn.execute(f"INSERT INTO {SCHEMA_TABLE} VALUES (1)")
    conn.commit()
    conn.close()
    async with SqliteDatabase(path, log_schema(1)):
        pass
    rows = read(path, f"SELECT component, version FROM {SCHEMA_TABLE} ORDER BY component")
    assert rows == [("glove_core.conversations", 1), ("test.log", 1)]


async def test_the_busy_timeout_is_the_layers_default_and_reaches_the_connection(
    tmp_path: Path,
) -> None:
    path = tmp_path / "g.db"
    async with SqliteDatabase(path, log_schema(1)) as db:
        assert db.busy_timeout == SQLITE_BUSY_TIMEOUT
        pragma = await db.read(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0])
        assert pragma == int(SQLITE_BUSY_TIMEOUT * 1000)

    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        async with SqliteDatabase(path, log_schema(1), busy_timeout=0) as impatient:
            with pytest.raises(StoreError, match=r"stayed locked.*busy timeout \(0 s\)"):
                await impatient.write(lambda c: c.execute("INSERT INTO log_test_log VALUES (9)"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


async def test_writes_are_all_or_nothing(tmp_path: Path) -> None:
    async with SqliteDatabase(tmp_path / "g.db", log_schema(1)) as db:

        def half(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO log_test_log VALUES (5)")
            raise RuntimeError("changed my mind")

        with pytest.raises(RuntimeError, match="changed my mind"):
            await db.write(half)
        assert await db.read(lambda c: c.execute("SELECT step FROM log_test_log").fetchall()) == [
            (1,)
        ]


async def test_every_call_runs_off_the_event_loop_thread(tmp_path: Path) -> None:
    async with SqliteDatabase(tmp_path / "g.db", log_schema(1)) as db:
        here = threading.get_ident()
        assert await db.read(lambda c: threading.get_ident()) != here
        assert await db.write(lambda c: threading.get_ident()) != here


async def test_one_connection_per_database_opened_lazily(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    db = SqliteDatabase(path, log_schema(1))
    assert not path.exists()  # nothing opened before the first call
    first = await db.read(lambda c: c)
    assert await db.read(lambda c: c) is first
    await db.aclose()


async def test_closing_is_idempotent_and_later_calls_raise(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "g.db", log_schema(1))
    await db.open()
    await db.aclose()
    await db.aclose()
    assert db.closed
    with pytest.raises(GloveStateError, match=r"SqliteDatabase\(.*'test\.log'\) is closed"):
        await db.read(lambda c: None)

    class Mine(Exception):
        pass

    custom = SqliteDatabase(tmp_path / "g.db", log_schema(1), closed_error=lambda: Mine("gone"))
    await custom.aclose()
    with pytest.raises(Mine, match="gone"):
        await custom.write(lambda c: None)


async def test_a_database_never_closed_releases_its_connection_when_collected(
    tmp_path: Path,
) -> None:
    db = SqliteDatabase(tmp_path / "g.db", log_schema(1))
    conn = await db.read(lambda c: c)
    # The worker thread that ran the read may still hold the database for a moment; if it
    # dropped the last reference, the finalizer would close the connection in that thread
    # while this one uses it (a crash, not a test). Wait until only this frame holds it.
    for _ in range(2000):
        if sys.getrefcount(db) <= 2:  # the local name and getrefcount's argument
            break
        await asyncio.sleep(0.001)
    del db
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        conn.execute("SELECT 1")


async def test_create_false_refuses_a_missing_file_and_creates_none(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match=r"typo\.db"):
        await SqliteDatabase(tmp_path / "typo.db", log_schema(1), create=False).open()
    assert names_in(tmp_path) == []


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        SqliteSchema(" ", migrations=(("SELECT 1",),))
    with pytest.raises(ValueError, match="migrations must be a non-empty tuple"):
        SqliteSchema("x", migrations=())
    with pytest.raises(ValueError, match="migration 2 must be a non-empty tuple of SQL"):
        SqliteSchema("x", migrations=(("SELECT 1",), "SELECT 2"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="busy_timeout must be 0 or more"):
        SqliteDatabase(tmp_path / "g.db", log_schema(1), busy_timeout=-1)
    assert log_schema(3).version == 3


# --- the page check: once per file per process, again when the file changed ---------------

_PAGE = 4096


async def _conversation_file(path: Path, messages: int) -> None:
    from glove_core import Message, SqliteStore

    async with SqliteStore(path, "s") as store:
        await store.append_messages(
            [Message(sender="user", text=f"message {n} " * 150) for n in range(messages)]
        )


def _damage_a_middle_page(path: Path) -> None:
    pages = path.stat().st_size // _PAGE
    with path.open("r+b") as file:
        file.seek((pages // 2) * _PAGE)
        file.write(bytes((n * 37 + 11) % 256 for n in range(_PAGE)))


def _bytes_read() -> int:
    """What this process has read through system calls so far (Linux: /proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/io has no rchar line")


async def test_a_file_damaged_after_its_check_is_refused_at_every_later_open(
    tmp_path: Path,
) -> None:
    from glove_core import SqliteStore

    path = tmp_path / "chat.db"
    await _conversation_file(path, 300)
    async with SqliteStore(path, "s") as store:  # checked and remembered as intact
        assert len(await store.get_messages()) == 300
    _damage_a_middle_page(path)
    before = path.read_bytes()
    for _ in range(2):
        with pytest.raises(StoreCorruptError):
            await SqliteStore(path, "s").open()
    assert path.read_bytes() == before


async def test_a_damaged_file_is_refused_by_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    await _conversation_file(path, 300)
    _damage_a_middle_page(path)
    before = path.read_bytes()
    script = (
        "import asyncio, sys\n"
        "from glove_core import SqliteStore\n"
        "from glove_core.errors import StoreCorruptError\n"
        "try:\n"
        "    asyncio.run(SqliteStore(sys.argv[1], 's').open())\n"
        "except StoreCorruptError:\n"
        "    sys.exit(3)\n"
    )
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", script, str(path))
    assert await process.wait() == 3
    assert path.read_bytes() == before


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux's /proc/self/io")
async def test_an_unchanged_file_is_read_whole_once_per_process(tmp_path: Path) -> None:
    from glove_core import SqliteStore

    path = tmp_path / "chat.db"
    await _conversation_file(path, 3000)
    other = tmp_path / "copy.db"
    other.write_bytes(path.read_bytes())  # a file this process never checked
    size = other.stat().st_size
    assert size > 4_000_000

    first = _bytes_read()
    async with SqliteStore(other, "s") as store:
        await store.open()
    first = _bytes_read() - first
    again = _bytes_read()
    async with SqliteStore(other, "s") as store:
        await store.open()
    again = _bytes_read() - again

    assert first > size  # the check read every page
    assert again < size / 10  # unchanged since: not read again
