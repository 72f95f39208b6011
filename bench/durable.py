"""The cost of durable turns (DBOS) against plain PostgreSQL turns, per step, in one run.

One process, one PostgreSQL server started for the run (``synchronous_commit=off``, with
``pg_stat_statements``), one database. Two Gloves on ``PostgresStore``: one plain
(``execution=None``), one durable (``DbosExecution`` on the same database). A model that
answers at once (``ScriptedModel``) and in-process tools, so what is measured is the
framework's and the databases' work. Three workloads, each a fresh conversation per request:

- ``answer``: one model call that answers: the turn's fixed cost plus one model step.
- ``tool``: a model call asking for one tool (not idempotent), the tool, a model call that
  answers: ``answer`` plus one tool round (a model step, the tool's two steps — prepare and
  invoke — and the results step).
- ``idempotent tool``: the same with an idempotent tool (one step).

Reported per workload and mode: milliseconds per request (median over batches) and database
round trips per request (statements PostgreSQL executed, from ``pg_stat_statements``; DBOS's
connections are on the same database, so its statements count too). Then the differences
durable - plain: the turn's own cost (``answer``) and one tool round (``tool`` - ``answer``).
Batches alternate the modes.

Run: ``python bench/durable.py [--requests 40] [--batches 5]`` (needs the ``durable`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from multi_instance import statements  # bench/multi_instance.py, beside this script

from glove_core import Glove, ScriptedModel, ToolCall, tool
from glove_core.dbos_execution import DbosExecution
from glove_core.execution import Execution
from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore
from glove_core.testing.postgres import PostgresServer


@tool
async def file_issue(title: str) -> str:
    """File an issue.

    Args:
        title: its title.
    """
    return f"filed {title}"


@tool(idempotent=True)
async def read_issue(title: str) -> str:
    """Read an issue.

    Args:
        title: its title.
    """
    return f"issue {title}"


WORKLOADS: dict[str, list[object]] = {
    "answer": ["done"],
    "tool": [[ToolCall(id="c1", name="file_issue", input={"title": "a"})], "done"],
    "idempotent tool": [[ToolCall(id="c1", name="read_issue", input={"title": "a"})], "done"],
}


@dataclass
class Figures:
    ms: list[float]
    trips: list[float]


async def batch(
    db: PostgresDatabase,
    execution: Execution | None,
    script: list[object],
    requests: int,
    label: str,
    count: Callable[[], Awaitable[int]],
) -> tuple[float, float]:
    gloves = []
    for n in range(requests):
        glove = Glove(
            model=ScriptedModel(list(script)),  # type: ignore[arg-type]
            system_prompt="bench",
            store=PostgresStore(db, f"{label}-{n}-{time.monotonic_ns()}"),
            execution=execution,
        )
        glove.fold(file_issue)
        glove.fold(read_issue)
        gloves.append(glove.build())
    before = await count()
    start = time.perf_counter()
    for glove in gloves:
        await glove.process_request("go")
    elapsed = time.perf_counter() - start
    after = await count()
    return elapsed * 1000 / requests, (after - before) / requests


async def main(args: argparse.Namespace) -> None:
    logging.getLogger("dbos").setLevel(logging.WARNING)
    settings = (
        "synchronous_commit=off",
        "shared_preload_libraries=pg_stat_statements",
        "pg_stat_statements.track_utility=on",
    )
    server = PostgresServer(fast=False, settings=settings, tcp=True)
    server.start()
    try:
        url = server.create_database("bench")
        import psycopg

        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        async with PostgresDatabase(url) as db, DbosExecution(url) as durable:
            modes: dict[str, Execution | None] = {"plain": None, "durable": durable}

            async def count() -> int:
                return await statements(server, "bench")

            results: dict[tuple[str, str], Figures] = {}
            for name, script in WORKLOADS.items():
                for mode, execution in modes.items():  # warm-up
                    await batch(db, execution, script, 3, f"warm-{mode}", count)
                for b in range(args.batches):
                    order = list(modes.items()) if b % 2 == 0 else list(modes.items())[::-1]
                    for mode, execution in order:
                        ms, trips = await batch(db, execution, script, args.requests, mode, count)
                        figures = results.setdefault((name, mode), Figures([], []))
                        figures.ms.append(ms)
                        figures.trips.append(trips)
    finally:
        server.stop()

    def med(name: str, mode: str) -> tuple[float, float]:
        f = results[(name, mode)]
        return statistics.median(f.ms), statistics.median(f.trips)

    print(f"# {args.requests} requests x {args.batches} batches per workload and mode")
    print(f"{'workload':<16} {'mode':<8} {'ms/request':>10} {'round trips':>12}")
    for name in WORKLOADS:
        for mode in ("plain", "durable"):
            ms, trips = med(name, mode)
            print(f"{name:<16} {mode:<8} {ms:>10.2f} {trips:>12.1f}")
    print("# durable - plain")
    for label, name, minus in (
        ("turn (answer)", "answer", None),
        ("tool round", "tool", "answer"),
        ("idempotent round", "idempotent tool", "answer"),
    ):
        dms = med(name, "durable")[0] - med(name, "plain")[0]
        dtr = med(name, "durable")[1] - med(name, "plain")[1]
        if minus is not None:
            dms -= med(minus, "durable")[0] - med(minus, "plain")[0]
            dtr -= med(minus, "durable")[1] - med(minus, "plain")[1]
        print(f"{label:<18} {dms:+8.2f} ms {dtr:+6.1f} round trips")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--batches", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
