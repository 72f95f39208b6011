"""Several server instances on one PostgreSQL database against one instance on SQLite.

Each configuration starts real ``glove-mcp serve`` processes with a scripted model (every
request: one model call that calls a tool of a local MCP server, one that answers), then a
bounded client drives ``--sessions`` sessions of ``--requests`` requests each through the
instances round-robin, ``--concurrency`` requests in flight. Configurations: one instance on
a SQLite file (the baseline), and one, two and three instances on one PostgreSQL database
(a server started for the run, ``synchronous_commit=off``: like SQLite's WAL with
``synchronous=NORMAL``, a crash of the OS may lose the last commits, never corrupt).

Reported per configuration: requests per second (and the ratio to the SQLite baseline),
median request latency, and database round trips per request (statements the PostgreSQL
server executed, from ``pg_stat_statements``; SQLite runs in the process and has none;
target ≤ 10, issue 31) per message request, counted after one warm-up request per instance
(each instance's one-time migration checks and LISTEN) and after the sessions were created;
creating a session (``POST /sessions``: the session's row, its owner, the principal's count)
is a request of its own, reported apart as "trips/session".
``--show-statements`` prints each statement's calls per request.

Pinned (``--pin``, on by default where ``taskset`` exists and there are 2 or more cores):
one instance on PostgreSQL again, with the database server (postmaster and every backend,
present and future) on the last core and the instance and this client on the others, so the
instance and the database never share a core (the MCP test server, started before, is not
pinned: it answers one tool call per request). The figure
is requests per second per instance with the database on its own core.

Run: ``python bench/multi_instance.py [--sessions 30] [--requests 4] [--concurrency 8]
[--instances 1,2,3] [--no-pin] [--show-statements]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx2

from glove_core.testing.postgres import PostgresServer
from glove_mcp.testing import spawn_server

KEY = "bench-key-long-enough-0123"
AUTH = {"Authorization": f"Bearer {KEY}"}
SCRIPT = {
    "from_history": True,
    "replies": [
        {"tool_calls": [{"name": "notes__search_pages", "input": {"query": "roadmap"}}]},
        "done",
    ],
}


@asynccontextmanager
async def instance(folder: Path, name: str, where: tuple[str, str]) -> AsyncIterator[str]:
    """One ``glove-mcp serve`` child process; yields its URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(GLOVE_HOME=str(folder), GLOVE_API_KEY=KEY, PYTHONUNBUFFERED="1")
    log = (folder / f"{name}.log").open("wb")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "glove_mcp.cli", "serve", "--port", "0", *where),
        *("--script", str(folder / "script.json"), "--catalogue", str(folder / "servers.toml")),
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.search(r"http://[\d.]+:\d+", line)
        if found is None:
            raise RuntimeError(f"{name} did not start: {(folder / f'{name}.log').read_text()}")
        yield found.group(0)
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
        log.close()


async def create_sessions(bases: list[str], sessions: int, concurrency: int) -> list[str]:
    """Create ``sessions`` sessions through the instances round-robin; their ids."""
    limit = asyncio.Semaphore(concurrency)
    async with httpx2.AsyncClient(timeout=120) as http:

        async def create(i: int) -> str:
            async with limit:
                created = await http.post(f"{bases[i % len(bases)]}/sessions", headers=AUTH)
            created.raise_for_status()
            return str(created.json()["id"])

        return list(await asyncio.gather(*(create(i) for i in range(sessions))))


async def drive(bases: list[str], ids: list[str], requests: int, concurrency: int) -> list[float]:
    """Send ``requests`` messages to each session, each through the next instance; the
    latency of every request (seconds); every one must end with ``final``."""
    limit = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    async with httpx2.AsyncClient(timeout=120) as http:

        async def session(i: int, sid: str) -> None:
            for k in range(requests):
                base = bases[(i + k) % len(bases)]
                async with limit:
                    start = time.perf_counter()
                    answer = await http.post(
                        f"{base}/sessions/{sid}/messages", headers=AUTH, json={"text": f"q{k}"}
                    )
                    latencies.append(time.perf_counter() - start)
                if "event: final" not in answer.text:
                    raise RuntimeError(f"request failed: {answer.text[-300:]}")

        await asyncio.gather(*(session(i, sid) for i, sid in enumerate(ids)))
    return latencies


async def statements(server: PostgresServer, database: str) -> int:
    """Statements the server has executed on ``database`` so far (pg_stat_statements)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(server.url(database)) as conn:
        cursor = await conn.execute(
            "SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements s JOIN pg_database d "
            "ON d.oid = s.dbid WHERE d.datname = %s",
            (database,),
        )
        row = await cursor.fetchone()
        return int(row[0]) if row else 0


async def statement_calls(server: PostgresServer, database: str) -> dict[str, int]:
    """Calls per statement text on ``database`` so far (pg_stat_statements)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(server.url(database)) as conn:
        cursor = await conn.execute(
            "SELECT s.query, SUM(s.calls) FROM pg_stat_statements s JOIN pg_database d "
            "ON d.oid = s.dbid WHERE d.datname = %s GROUP BY s.query",
            (database,),
        )
        return {str(query): int(calls) for query, calls in await cursor.fetchall()}


def pin_postgres(server: PostgresServer, core: int) -> list[int]:
    """Pin the PostgreSQL server to ``core``: the postmaster (backends forked later inherit
    it) and every process it has started; returns the pids pinned."""
    pid_file = Path(server.folder) / "data" / "postmaster.pid"
    postmaster = int(pid_file.read_text().split()[0])
    children = subprocess.run(
        ["pgrep", "-P", str(postmaster)], capture_output=True, text=True, check=False
    ).stdout.split()
    pids = [postmaster, *(int(c) for c in children)]
    for pid in pids:
        subprocess.run(
            ["taskset", "-a", "-p", "-c", str(core), str(pid)], capture_output=True, check=True
        )
    return pids


async def run_config(
    folder: Path,
    label: str,
    wheres: list[tuple[str, str]],
    args: argparse.Namespace,
    count: tuple[PostgresServer, str] | None,
) -> tuple[str, float, float, float | None, float | None]:
    async with AsyncExitStack() as stack:
        bases = [
            await stack.enter_async_context(instance(folder, f"{label}-{n}", where))
            for n, where in enumerate(wheres)
        ]
        # Each instance's one-time work (migration checks, LISTEN) happens on its first
        # request: one warm-up session per instance runs it before the count starts, so the
        # figure is per request; the count from the very start is reported too.
        await drive(bases, await create_sessions(bases, len(bases), 1), 1, args.concurrency)
        # Creating a session is a request of its own (POST /sessions): counted apart.
        created = await statements(*count) if count else 0
        ids = await create_sessions(bases, args.sessions, args.concurrency)
        before = await statements(*count) if count else 0
        calls_before = await statement_calls(*count) if count and args.show_statements else {}
        start = time.perf_counter()
        latencies = await drive(bases, ids, args.requests, args.concurrency)
        elapsed = time.perf_counter() - start
        after = await statements(*count) if count else 0
        if count and args.show_statements:
            calls = await statement_calls(*count)
            per = args.sessions * args.requests
            print(f"# {label}: statements per message request")
            for query, n in sorted(calls.items(), key=lambda kv: -kv[1]):
                made = (n - calls_before.get(query, 0)) / per
                if made > 0:
                    print(f"{made:6.2f}  {' '.join(query.split())[:150]}")
    total = args.sessions * args.requests
    trips = (after - before) / total if count else None
    per_session = (before - created) / args.sessions if count else None
    return label, total / elapsed, statistics.median(latencies), trips, per_session


async def main(args: argparse.Namespace) -> None:
    pin = args.pin and shutil.which("taskset") is not None and len(os.sched_getaffinity(0)) > 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "script.json").write_text(json.dumps(SCRIPT))
        settings = (
            "synchronous_commit=off",
            "shared_preload_libraries=pg_stat_statements",
            "pg_stat_statements.track_utility=on",
        )
        pg = PostgresServer(fast=False, settings=settings, max_connections=400)
        pg.start()
        try:
            async with spawn_server("notes") as notes:
                (folder / "servers.toml").write_text(
                    f'[[servers]]\nid = "notes"\nname = "Notes"\ndescription = "Pages."\n'
                    f'url = "{notes}"\n'
                )
                rows = [
                    await run_config(
                        folder, "sqlite x1", [("--db", str(folder / "s.db"))], args, None
                    )
                ]
                for n in args.instances:
                    name = f"glove{n}"
                    url = pg.create_database(name)
                    await _extension(url)
                    rows.append(
                        await run_config(
                            folder, f"postgres x{n}", [("--database", url)] * n, args, (pg, name)
                        )
                    )
                if pin:
                    cores = sorted(os.sched_getaffinity(0))
                    db_core, others = cores[-1], set(cores[:-1])
                    url = pg.create_database("pinned")
                    await _extension(url)
                    pin_postgres(pg, db_core)
                    own = os.sched_getaffinity(0)
                    os.sched_setaffinity(0, others)  # the client; children inherit it
                    try:
                        pinned = await run_config(
                            folder,
                            "pinned pg x1",
                            [("--database", url)],
                            args,
                            (pg, "pinned"),
                        )
                    finally:
                        os.sched_setaffinity(0, own)
                    rows.append(pinned)
                    print(
                        f"# pinned: PostgreSQL on core {db_core}; the instance and the client "
                        f"on core(s) {','.join(map(str, sorted(others)))} (the MCP test server, "
                        "started before, is not pinned)"
                    )
        finally:
            pg.stop()
    base = rows[0][1]
    print(f"# {platform.platform()}, {os.cpu_count()} CPUs; python {platform.python_version()}")
    print(
        f"# {args.sessions} sessions x {args.requests} requests (each: 2 model calls, 1 MCP tool "
        f"call), {args.concurrency} in flight, instances round-robin"
    )
    header = ("configuration", "req/s", "vs sqlite", "median ms", "db trips/req", "trips/session")
    print(
        f"{header[0]:<14} {header[1]:>8} {header[2]:>10} {header[3]:>10} {header[4]:>13} "
        f"{header[5]:>13}"
    )
    for label, rate, median, trips, per_session in rows:
        shown = "-" if trips is None else f"{trips:.1f}"
        started = "-" if per_session is None else f"{per_session:.1f}"
        print(
            f"{label:<14} {rate:8.1f} {rate / base:9.2f}x {median * 1000:10.1f} {shown:>13} "
            f"{started:>13}"
        )
    shared = [r for r in rows[1:] if not r[0].startswith("pinned")]
    best = max(shared, key=lambda r: r[1])
    trips = max(r[3] or 0 for r in rows[1:])
    print(
        f"summary: {best[0]} serves {best[1]:.1f} req/s, {best[1] / base:.2f}x one SQLite "
        f"instance; at most {trips:.1f} database round trips per request (target <= 10: "
        f"{'met' if trips <= 10 else 'MISSED'})"
        + (
            f"; pinned, one instance with the database on its own core: {rows[-1][1]:.1f} "
            "req/s per instance"
            if pin
            else ""
        )
    )


async def _extension(url: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")


def _instances(text: str) -> list[int]:
    return [int(n) for n in text.split(",") if n]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--instances", type=_instances, default=[1, 2, 3])
    parser.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="skip the configuration with the database pinned to its own core",
    )
    parser.add_argument(
        "--show-statements", action="store_true", help="print each statement's calls per request"
    )
    asyncio.run(main(parser.parse_args()))
