"""Store cost: SqliteStore against MemoryStore on a 2,000-message conversation.

Workload: 500 rounds of user question, agent reply with one tool call, the tool's result
(six rows of JSON data), agent answer — 2,000 messages, about 0.9 MB as JSON.

Measured, each the median of ``--repeats`` runs, both stores in the same process:

- append: the 2,000 messages saved one ``append_messages`` call each, as the loop saves them
  (one transaction per call on SQLite); reported per call.
- load: ``get_messages()`` of the whole conversation — what every request did first until
  issue 18; a request now reads only from the last compaction on
  (``get_messages_since_compaction``, measured by ``bench/history_cost.py``), so this is the
  cost of a conversation never compacted, or of an application showing the whole history.
- reopen + load: a new store object on the same file, first call (what a restarted process
  pays: connect, schema check, read).
- connect only: opening a connection with the store's pragmas and schema check, the cost a
  connection-per-call design would add to every call (why SqliteStore keeps one per object).

Target (issue 3): loading a 2,000-message history under 50 ms.

Run: ``python bench/store.py [--repeats 5] [--messages 2000]``
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
from collections.abc import Awaitable, Callable

from glove_core import MemoryStore, Message, SqliteStore, ToolCall, ToolResult, ToolResultData
from glove_core.sqlite import SqliteDatabase

TARGET_LOAD_MS = 50.0


def conversation(count: int) -> list[Message]:
    """``count`` messages (a multiple of four) shaped like a tool-using chat."""
    messages: list[Message] = []
    for n in range(count // 4):
        call = ToolCall(id=f"call_{n}", name="search_orders", input={"query": f"order {n}"})
        rows = [
            {"id": n * 10 + i, "item": "oat milk", "qty": i, "note": "x" * 40} for i in range(6)
        ]
        messages += [
            Message(sender="user", text=f"What happened to order {n}? " * 3),
            Message(sender="agent", text="Let me look that up.", tool_calls=[call]),
            Message(
                sender="user",
                tool_results=[
                    ToolResult(
                        call_id=call.id,
                        name=call.name,
                        result=ToolResultData(data={"rows": rows}, render_data={"table": True}),
                    )
                ],
            ),
            Message(sender="agent", text=f"Order {n} shipped yesterday and arrives Friday. " * 4),
        ]
    return messages


async def timed(fn: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def measure(messages: list[Message], repeats: int, folder: str) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}

    def add(key: str, seconds: float) -> None:
        results.setdefault(key, []).append(seconds)

    for run in range(repeats):
        memory = MemoryStore("bench")
        path = os.path.join(folder, f"bench-{run}.db")
        sqlite = SqliteStore(path, "bench")
        await sqlite.open()  # creating the file is setup, not part of the append figure
        for name, store in (("memory", memory), ("sqlite", sqlite)):

            async def append_all(store: MemoryStore | SqliteStore = store) -> None:
                for message in messages:
                    await store.append_messages([message])

            add(f"append:{name}", await timed(append_all) / len(messages))
            add(f"load:{name}", await timed(store.get_messages))
        loaded = await sqlite.get_messages()
        if loaded != messages:
            raise SystemExit("SqliteStore returned a different history than it was given")
        await sqlite.aclose()

        reopened = SqliteStore(path, "bench")
        add("reopen:sqlite", await timed(reopened.get_messages))
        await reopened.aclose()

        def connect_once(path: str = path) -> None:
            database = SqliteDatabase(path, SqliteStore.schema, create=False)
            database.read_sync(lambda conn: None)
            database.close_sync()

        add("connect:sqlite", await timed(lambda: asyncio.to_thread(connect_once)))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    messages = conversation(args.messages)
    size = sum(len(m.model_dump_json()) for m in messages)
    with tempfile.TemporaryDirectory() as folder:
        results = asyncio.run(measure(messages, args.repeats, folder))
    med = {key: statistics.median(values) for key, values in results.items()}

    print(
        f"store bench: {len(messages)} messages ({size / 1e6:.2f} MB JSON), median of "
        f"{args.repeats}; Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} CPU(s)"
    )
    print(f"{'operation':<34} {'MemoryStore':>12} {'SqliteStore':>12} {'ratio':>8}")
    rows = [
        ("append, per call (µs)", "append", 1e6),
        (f"load {len(messages)} messages (ms)", "load", 1e3),
    ]
    for label, key, scale in rows:
        mem, sql = med[f"{key}:memory"], med[f"{key}:sqlite"]
        print(f"{label:<34} {mem * scale:>12.1f} {sql * scale:>12.1f} {sql / mem:>7.1f}x")
    print(f"{'reopen + first load (ms)':<34} {'-':>12} {med['reopen:sqlite'] * 1e3:>12.1f}")
    print(f"{'connect + checks only (ms)':<34} {'-':>12} {med['connect:sqlite'] * 1e3:>12.2f}")

    load_ms = med["load:sqlite"] * 1e3
    verdict = "meets" if load_ms < TARGET_LOAD_MS else "MISSES"
    print(
        f"SqliteStore loads {len(messages)} messages in {load_ms:.1f} ms ({verdict} the "
        f"{TARGET_LOAD_MS:.0f} ms target; {med['load:sqlite'] / med['load:memory']:.1f}x "
        f"MemoryStore), appends in {med['append:sqlite'] * 1e6:.0f} µs a call "
        f"({med['append:sqlite'] / med['append:memory']:.0f}x MemoryStore)"
    )
    return 0 if load_ms < TARGET_LOAD_MS else 1


if __name__ == "__main__":
    sys.exit(main())
