"""Cost growth: what one request costs the framework as the conversation's past grows.

A ``SqliteStore`` conversation holds 2,000, 20,000 or 200,000 saved messages (the old part
compacted every 1,000 messages, as a long-running agent's would be) and, after its last
compaction, the same visible history: the summary and 39 messages. The model is a
``ScriptedModel`` (no network, no model time), so what is measured is the framework: reading
the history, building the request, saving the reply, the counters.

Three paths, measured in the same run on the same files (one path after the other; within a
path the sizes take turns, request by request):

- ``warm`` (the window path): the loop as shipped on a store object kept open.
  ``SqliteStore`` is a ``CompactedHistoryStore``, so a request reads from the last compaction
  on (two index lookups).
- ``cold``: the same, but every request opens a fresh ``SqliteStore`` (and closes it), as a
  restarted process or the headless server reopening an evicted session does. Opening costs
  the connection, the schema check and, once per file per process, SQLite's page check
  (issue 31: it used to read the whole file at every open). The first cold open of each file
  in this process is part of the warm-up, like the warm path's first open.
- ``whole``: the baseline, the loop before issue 18: the store hides the capability, so the
  loop reads ``get_messages()`` — everything ever said — and filters it.

Per request: the median wall time, and the peak of Python memory allocated during it
(``tracemalloc``, measured in separate requests so tracing does not slow the timed ones).
Targets: from the smallest to the largest conversation, the warm path's time and memory per
request stay within 1.5x (issue 18), and so does the cold path's time (issue 31).

Run: ``python bench/history_cost.py`` (about a minute) or ``--quick`` (a few seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from glove_core import Glove, Message, ScriptedModel, SqliteStore

__all__ = ["main"]

VISIBLE = 40
COMPACT_EVERY = 1_000
BATCH = 10_000
TARGET = 1.5


class WholeHistoryStore(SqliteStore):
    """The baseline: a SqliteStore without ``get_messages_since_compaction``, so the loop
    falls back to reading every message (how every request worked before issue 18)."""

    # A protocol method set to None is not implemented, as far as isinstance() is concerned.
    get_messages_since_compaction = None  # type: ignore[assignment]


def _text(n: int) -> str:
    return f"message {n}: " + "the quick brown fox jumps over the lazy dog. " * 6


def history(saved: int) -> list[list[Message]]:
    """``saved`` messages in append batches: compacted every COMPACT_EVERY messages, then the
    last compaction and VISIBLE - 1 messages after it."""
    old = saved - VISIBLE
    messages: list[Message] = []
    for n in range(old):
        if n % COMPACT_EVERY == COMPACT_EVERY - 1:
            messages.append(Message(sender="user", text=_text(n), is_compaction=True))
        else:
            messages.append(Message(sender="user" if n % 2 else "agent", text=_text(n)))
    messages.append(Message(sender="user", text="<conversation_summary>…", is_compaction=True))
    for n in range(VISIBLE - 1):
        messages.append(Message(sender="agent" if n % 2 else "user", text=_text(old + n)))
    return [messages[i : i + BATCH] for i in range(0, len(messages), BATCH)]


async def fill(path: Path, saved: int) -> None:
    """Save the conversation through the store's public API, in batches (one transaction
    each)."""
    async with SqliteStore(path, "long") as store:
        for batch in history(saved):
            await store.append_messages(batch)


async def one_request(store: SqliteStore | Path, traced: bool) -> float:
    """Run one request on a fresh Glove (as a restarted server would); seconds or peak bytes.

    Given a path, the request opens a fresh ``SqliteStore`` on it and closes it (the cold
    path): both are part of the measured time.
    """
    gc.collect()  # the previous request's garbage is not this one's cost
    if traced:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        await _request(store)
        return float(tracemalloc.get_traced_memory()[1] - base)
    start = time.perf_counter()
    await _request(store)
    return time.perf_counter() - start


async def _request(store: SqliteStore | Path) -> None:
    if isinstance(store, Path):
        async with SqliteStore(store, "long") as fresh:
            await _request(fresh)
        return
    agent = Glove(model=ScriptedModel(["fine."]), system_prompt="Be brief.", store=store)
    agent.build()
    await agent.process_request("and now?")


async def measure(
    paths: dict[int, Path], requests: dict[str, int], traced: int
) -> dict[int, dict[str, tuple[float, float]]]:
    """Median seconds and median peak bytes per request, per size and path.

    The paths run one after the other, so the baseline's large reads never disturb the timed
    window requests; within a path the sizes take turns request by request, so a change in
    the machine's load falls on every size alike.
    """
    out: dict[int, dict[str, tuple[float, float]]] = {size: {} for size in paths}
    for name, kind in (
        ("warm", SqliteStore),
        ("cold", None),
        ("whole", WholeHistoryStore),
    ):
        stores: dict[int, SqliteStore | Path] = {
            size: path if kind is None else kind(path, "long") for size, path in paths.items()
        }
        times: dict[int, list[float]] = {size: [] for size in paths}
        peaks: dict[int, list[float]] = {size: [] for size in paths}
        try:
            for store in stores.values():
                await one_request(store, traced=False)  # warm up: open, fill the page cache
            for _ in range(requests[name]):
                for size, store in stores.items():
                    times[size].append(await one_request(store, traced=False))
            tracemalloc.start()
            try:
                for _ in range(traced):
                    for size, store in stores.items():
                        peaks[size].append(await one_request(store, traced=True))
            finally:
                tracemalloc.stop()
        finally:
            for store in stores.values():
                if isinstance(store, SqliteStore):
                    await store.aclose()
        for size in paths:
            out[size][name] = (statistics.median(times[size]), statistics.median(peaks[size]))
    return out


async def run(sizes: list[int], requests: dict[str, int], traced: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        paths = {size: Path(tmp) / f"h{size}.db" for size in sizes}
        for saved, path in paths.items():
            start = time.perf_counter()
            await fill(path, saved)
            print(
                f"filled {saved:,} messages in {time.perf_counter() - start:.1f} s "
                f"(append_messages, batches of {BATCH:,})"
            )
        results = await measure(paths, requests, traced)
    rows = [(size, results[size]) for size in sizes]
    print(
        f"framework cost per request, SqliteStore, {VISIBLE} visible messages after the last "
        f"compaction at the start (median of {requests['warm']} timed requests on the warm and "
        f"cold paths, {requests['whole']} on the whole-history path, {traced} traced on each)"
    )
    header = (
        f"{'saved msgs':>11} | {'warm ms':>8} | {'cold ms':>8} | {'whole ms':>9} | "
        f"{'warm KiB':>9} | {'cold KiB':>9} | {'whole KiB':>10}"
    )
    print(header)
    print("-" * len(header))
    for saved, result in rows:
        (wt, wm), (ct, cm), (ot, om) = result["warm"], result["cold"], result["whole"]
        print(
            f"{saved:>11,} | {wt * 1000:>8.2f} | {ct * 1000:>8.2f} | {ot * 1000:>9.2f} | "
            f"{wm / 1024:>9.0f} | {cm / 1024:>9.0f} | {om / 1024:>10.0f}"
        )
    (small, first), (large, last) = rows[0], rows[-1]
    ratio = {
        (name, kind): last[name][kind] / first[name][kind]
        for name in ("warm", "cold", "whole")
        for kind in (0, 1)
    }
    ok = all(ratio[name, kind] <= TARGET for name in ("warm", "cold") for kind in (0, 1))
    print(
        f"summary: from {small:,} to {large:,} saved messages, a request's framework time grows "
        f"{ratio['warm', 0]:.2f}x warm and {ratio['cold', 0]:.2f}x cold (a fresh store per "
        f"request), its memory {ratio['warm', 1]:.2f}x warm and {ratio['cold', 1]:.2f}x cold, "
        f"reading from the last compaction (whole history: {ratio['whole', 0]:.1f}x and "
        f"{ratio['whole', 1]:.1f}x); target ≤ {TARGET}x: {'met' if ok else 'NOT met'}"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,20000,200000", help="saved messages, commas")
    parser.add_argument(
        "--requests", type=int, default=25, help="timed requests, warm and cold paths"
    )
    parser.add_argument(
        "--baseline-requests", type=int, default=4, help="timed requests, whole-history path"
    )
    parser.add_argument("--traced", type=int, default=3, help="memory-traced requests per path")
    parser.add_argument("--quick", action="store_true", help="small sizes, few requests")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.requests, args.baseline_requests, args.traced = "200,2000", 3, 2, 1
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes takes whole numbers separated by commas, got {args.sizes!r}")
    if any(s < VISIBLE + 1 for s in sizes) or len(sizes) < 2:
        parser.error(f"--sizes needs two or more sizes, each at least {VISIBLE + 1}")
    if min(args.requests, args.baseline_requests, args.traced) < 1:
        parser.error("--requests, --baseline-requests and --traced must be at least 1")
    requests = {"warm": args.requests, "cold": args.requests, "whole": args.baseline_requests}
    return asyncio.run(run(sizes, requests, args.traced))


if __name__ == "__main__":
    sys.exit(main())
