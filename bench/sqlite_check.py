"""Opening a SQLite store: what the page check at open costs (issue 16, item 19).

A store file of ``--mb`` megabytes (one conversation of plain text messages) is built once,
then each operation is timed ``--repeats`` times (median) on a fresh connection, with the file
in the OS page cache:

- open, no page check: connect and the schema checks (what opening cost before the check).
- PRAGMA quick_check: what the layer now runs at every open.
- PRAGMA integrity_check: the full check (also cross-checks every index against its table).
- SqliteDatabase.open(): the layer's whole open, quick_check included.

Run: ``python bench/sqlite_check.py [--mb 100] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from glove_core import Message, SqliteStore
from glove_core.sqlite import SqliteDatabase


async def build(path: str, megabytes: int) -> None:
    batch = [Message(sender="user", text=f"message {n} " * 200) for n in range(1000)]
    async with SqliteStore(path, "bench") as store:
        while await asyncio.to_thread(os.path.getsize, path) < megabytes * 1_000_000:
            await store.append_messages(batch)


def timed(fn: Callable[[], object], repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def pragma(path: str, name: str) -> Callable[[], object]:
    def run() -> object:
        conn = sqlite3.connect(path)
        try:
            return conn.execute(f"PRAGMA {name}").fetchall()
        finally:
            conn.close()

    return run


def layer_open(path: str) -> Callable[[], object]:
    def run() -> object:
        database = SqliteDatabase(path, SqliteStore.schema, create=False)
        database.read_sync(lambda conn: None)
        database.close_sync()
        return None

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.db")
        asyncio.run(build(path, args.mb))
        size = os.path.getsize(path) / 1e6
        base = timed(pragma(path, "schema_version"), args.repeats)
        quick = timed(pragma(path, "quick_check"), args.repeats)
        full = timed(pragma(path, "integrity_check"), args.repeats)
        whole = timed(layer_open(path), args.repeats)
    print(
        f"sqlite check bench: {size:.0f} MB file, median of {args.repeats}; Python "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPU(s)"
    )
    print(f"{'operation':<36} {'ms':>9} {'ms/MB':>7} {'vs quick_check':>15}")
    for label, seconds in (
        ("open, no page check", base),
        ("PRAGMA quick_check", quick),
        ("PRAGMA integrity_check", full),
        ("SqliteDatabase.open() (with check)", whole),
    ):
        print(
            f"{label:<36} {seconds * 1e3:>9.1f} {seconds * 1e3 / size:>7.2f} "
            f"{seconds / quick:>14.2f}x"
        )
    print(
        f"summary: quick_check takes {quick / full:.2f}x the time of integrity_check on a "
        f"{size:.0f} MB file ({quick * 1e3 / size:.2f} ms per MB), paid once per connection"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
