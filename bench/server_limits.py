"""Headless server limits (issue 16 items 2, 3, 15), each against a baseline in the same run.

(a) Sessions under a file-descriptor limit: ``glove-mcp serve`` as a child process with
    ``ulimit -n LIMIT`` serves ``--sessions`` new sessions one after another (create, one
    message each). Baseline: the same server with eviction disabled (``--max-sessions``
    1,000,000), i.e. every session kept open, as before the fix. Reported: sessions served,
    requests refused, log bytes written, wall time.
(b) Slow clients: the median and p95 latency of a real request (create a session, read it)
    with no other connection open, then with ``--slow`` idle connections open (connected,
    sending nothing), then with ``--slow`` connections that send request headers one line
    every second and never finish; then how many of those the server closed within
    ``--header-timeout`` + 5 s.
(c) Session creation cost against the number of sessions in the file (``--sizes``, each
    session with four messages): the new check (``SqliteStore.create_session``, one
    primary-key insert) against the old one (``SqliteStore.list_sessions``, which counts every
    message of every session), median of ``--repeats`` creations each.

Run: ``python bench/server_limits.py [--limit 256] [--sessions 500] [--slow 200]
[--sizes 1000,5000,20000]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2

from glove_core import Message, SqliteStore

KEY = "bench-key-long-enough-0123"
AUTH = {"Authorization": f"Bearer {KEY}"}


@asynccontextmanager
async def serve(
    folder: Path, *flags: str, nofile: int | None = None
) -> AsyncIterator[tuple[str, int, Path]]:
    """``glove-mcp serve`` with an offline script; yields (host, port, log file)."""
    catalogue = folder / "servers.toml"
    catalogue.write_text(
        '[[servers]]\nid = "idle"\nname = "Idle"\ndescription = "Never activated."\n'
        'url = "http://127.0.0.1:9/mcp"\n'
    )
    script = folder / "script.json"
    script.write_text(json.dumps(["ok"] * 4))
    log = folder / f"serve-{time.monotonic_ns()}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(GLOVE_HOME=str(folder), GLOVE_API_KEY=KEY)

    def limit() -> None:
        if nofile is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    db = folder / f"db-{time.monotonic_ns()}.db"
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "glove_mcp.cli", "serve", "--port", "0", "--script", str(script)),
            *("--catalogue", str(catalogue), "--db", str(db), *flags),
            stdout=asyncio.subprocess.PIPE,
            stderr=out,
            env=env,
            preexec_fn=limit,
        )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.search(r"http://([\d.]+):(\d+)", line)
        if found is None:
            raise SystemExit(f"serve did not start: {line!r} {log.read_text()[:500]}")
        yield found.group(1), int(found.group(2)), log
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


# -- (a) sessions under a file limit ----------------------------------------------------------


async def sessions_under_limit(
    folder: Path, limit: int, count: int, *flags: str
) -> dict[str, float]:
    async with serve(folder, *flags, nofile=limit) as (host, port, log):
        served = refused = 0
        start = time.perf_counter()
        async with httpx2.AsyncClient(
            base_url=f"http://{host}:{port}", headers=AUTH, timeout=30
        ) as client:
            for index in range(count):
                try:
                    made = await client.post("/sessions", json={"id": f"s{index}"})
                    reply = await client.post(f"/sessions/s{index}/messages", json={"text": "hi"})
                    ok = made.status_code == 201 and "event: final" in reply.text
                except httpx2.HTTPError:
                    ok = False
                served += ok
                refused += not ok
        wall = time.perf_counter() - start
    return {"served": served, "refused": refused, "log": log.stat().st_size, "wall": wall}


# -- (b) slow clients -------------------------------------------------------------------------


async def latencies(base: str, rounds: int) -> list[float]:
    times = []
    async with httpx2.AsyncClient(base_url=base, headers=AUTH, timeout=60) as client:
        for _ in range(rounds):
            start = time.perf_counter()
            made = await client.post("/sessions")
            await client.get(f"/sessions/{made.json()['id']}")
            times.append(time.perf_counter() - start)
    return times


async def slow_clients(
    folder: Path, slow: int, rounds: int, header_timeout: float, *, idle: bool = False
) -> dict[str, float]:
    """Latency with ``slow`` connections open: idle ones (nothing sent) or ones trickling
    request headers."""
    flags = ("--header-timeout", str(header_timeout))
    async with serve(folder, *flags) as (host, port, _):
        base = f"http://{host}:{port}"
        quiet = await latencies(base, rounds)
        conns = [await asyncio.open_connection(host, port) for _ in range(slow)]
        opened = time.perf_counter()
        for _, writer in conns:
            if not idle:
                writer.write(b"POST /sessions HTTP/1.1\r\nhost: x\r\n")

        async def trickle() -> None:
            if idle:
                return
            for n in range(int(header_timeout) + 10):
                await asyncio.sleep(1)
                for _, writer in conns:
                    if not writer.is_closing():
                        writer.write(f"x-slow-{n}: 1\r\n".encode())

        dripping = asyncio.create_task(trickle())
        busy = await latencies(base, rounds)

        async def closed(reader: asyncio.StreamReader) -> float | None:
            try:
                await asyncio.wait_for(reader.read(), header_timeout + 5)
            except (TimeoutError, ConnectionError):
                return None
            return time.perf_counter() - opened

        ends = await asyncio.gather(*(closed(r) for r, _ in conns))
        dripping.cancel()
        for _, writer in conns:
            writer.close()
    done = [e for e in ends if e is not None]
    return {
        "quiet_median": statistics.median(quiet),
        "quiet_p95": statistics.quantiles(quiet, n=20)[-1],
        "busy_median": statistics.median(busy),
        "busy_p95": statistics.quantiles(busy, n=20)[-1],
        "closed": len(done),
        "closed_by": max(done) if done else float("nan"),
    }


# -- (c) creation cost ------------------------------------------------------------------------


def fill(path: Path, sessions: int) -> None:
    conn = sqlite3.connect(path)
    data = Message(sender="user", text="hello there").model_dump_json()
    with conn:
        conn.executemany(
            "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (?, '', '')",
            [(f"old{i}",) for i in range(sessions)],
        )
        conn.executemany(
            "INSERT INTO glove_messages (session_id, message_id, sender, is_compaction, data) "
            "VALUES (?, 'm', 'user', 0, ?)",
            [(f"old{i}", data) for i in range(sessions) for _ in range(4)],
        )
    conn.close()


async def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def creation_cost(folder: Path, size: int, repeats: int) -> dict[str, float]:
    path = folder / f"sessions-{size}.db"
    async with SqliteStore(path, "seed") as seed:
        await seed.create_session()
    fill(path, size)
    old, new = [], []
    for index in range(repeats):

        async def old_check(index: int = index) -> None:
            known = {s.session_id for s in await SqliteStore.list_sessions(path)}
            assert f"new{index}" not in known

        old.append(await timed(old_check))
        async with SqliteStore(path, f"new{index}") as store:
            await store.open()
            new.append(await timed(store.create_session))
    return {"old": statistics.median(old), "new": statistics.median(new)}


# -- report -----------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        before = await sessions_under_limit(
            folder, args.limit, args.sessions, "--max-sessions", "1000000"
        )
        after = await sessions_under_limit(folder, args.limit, args.sessions)
        slow = await slow_clients(folder, args.slow, args.rounds, args.header_timeout)
        idle = await slow_clients(folder, args.slow, args.rounds, args.header_timeout, idle=True)
        sizes = [int(s) for s in args.sizes.split(",")]
        costs = {size: await creation_cost(folder, size, args.repeats) for size in sizes}

    print(
        f"server limits bench: Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}, {os.cpu_count()} CPU(s)"
    )
    print(f"(a) {args.sessions} sessions under ulimit -n {args.limit}")
    print(f"{'server':<34} {'served':>8} {'refused':>8} {'log bytes':>10} {'wall s':>8}")
    for label, row in (("no eviction (baseline)", before), ("eviction (default cap)", after)):
        print(
            f"{label:<34} {row['served']:>8.0f} {row['refused']:>8.0f} {row['log']:>10.0f} "
            f"{row['wall']:>8.1f}"
        )
    print(f"(b) request latency (create + read a session), {args.rounds} requests")
    print(f"{'open connections':<34} {'median ms':>10} {'p95 ms':>10}")
    cases = (
        ("none (baseline)", slow, "quiet"),
        (f"{args.slow} idle (nothing sent)", idle, "busy"),
        (f"{args.slow} slow (headers trickled)", slow, "busy"),
    )
    for label, row, key in cases:
        median, p95 = row[f"{key}_median"] * 1e3, row[f"{key}_p95"] * 1e3
        print(f"{label:<34} {median:>10.2f} {p95:>10.2f}")
    for kind, row in (("idle", idle), ("slow", slow)):
        print(
            f"    {kind} connections closed by the server: {row['closed']:.0f}/{args.slow}, the "
            f"last {row['closed_by']:.1f} s after opening (--header-timeout "
            f"{args.header_timeout:g})"
        )
    print(f"(c) session creation, median of {args.repeats} (ms)")
    print(f"{'sessions in the file':<34} {'old check':>10} {'new':>10} {'ratio':>8}")
    for size, cost in costs.items():
        print(
            f"{size:<34} {cost['old'] * 1e3:>10.2f} {cost['new'] * 1e3:>10.2f} "
            f"{cost['old'] / cost['new']:>7.1f}x"
        )
    largest = costs[sizes[-1]]
    smallest = costs[sizes[0]]
    print(
        f"summary: under ulimit -n {args.limit} {after['served']:.0f}/{args.sessions} sessions "
        f"served with eviction vs {before['served']:.0f} without; latency with {args.slow} idle / "
        f"slow connections {idle['busy_median'] / slow['quiet_median']:.2f}x / "
        f"{slow['busy_median'] / slow['quiet_median']:.2f}x none; creating a "
        f"session at {sizes[-1]} sessions {largest['new'] * 1e3:.2f} ms "
        f"({largest['new'] / smallest['new']:.1f}x the cost at {sizes[0]}; the old check "
        f"{largest['old'] * 1e3:.1f} ms)"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--limit", type=int, default=256, help="ulimit -n of the server")
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--slow", type=int, default=200, help="slow connections to open")
    parser.add_argument("--rounds", type=int, default=100, help="requests timed per case")
    parser.add_argument("--header-timeout", type=float, default=3.0)
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeats", type=int, default=20)
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
