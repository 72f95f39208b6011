"""Large results: what a huge MCP tool result costs a Glove, bounded against unbounded.

A sizes test server (``python -m glove_mcp.testing sizes``, a child process so its memory is
not counted) answers one ``text`` call with a result of ``--sizes`` megabytes (default 50 and
200). Each scenario runs in a fresh child process of its own, so its peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, the kernel's high-water mark of the process's
RSS) is that scenario's alone:

- ``raw``: the SDK alone (``streamable_http_client`` + ``ClientSession``, its SSE event bound
  switched off) receives the result and keeps nothing: the floor of receiving it at all.
- ``unbounded``: a Glove with a real ``SqliteStore``, the server mounted with every bound
  opened (``max_message_bytes`` and ``max_result_chars`` at 2**31, ``ResultLimits`` likewise):
  the "store everything" path, as before issue 16 kept the whole result in ``render_data``
  (here the model's text is not cut either, so the text is stored twice: as ``data`` and in
  ``render_data``).
- ``bridge-cut``: the same Glove with ``max_message_bytes`` raised to 2**31 but the default
  ``max_result_chars`` (100,000): the result is read, then cut by the bridge before it is
  saved.
- ``default``: the same Glove with the defaults: the transport stops reading past 8 MiB and
  the call is an error result naming the limit.

For each: the stored history on disk (the SQLite file and its WAL), the peak RSS and its rise
over the RSS before the call, the time of the call's request, and the median time of
``--later`` later requests (a plain reply: each one loads the whole history from the store).

Run: ``python bench/large_results.py [--sizes 50,200] [--later 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from glove_core import Glove, ResultLimits, ScriptedModel, SqliteStore, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.testing import spawn_server

SCENARIOS = ("raw", "unbounded", "bridge-cut", "default")
_OPEN = 2**31


def _rss_mib() -> float:
    """The resident set size now, from /proc (MiB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _disk(folder: str, scenario: str) -> int:
    """Bytes of the scenario's SQLite file and its WAL and shared-memory files."""
    return sum(p.stat().st_size for p in Path(folder).glob(f"{scenario}.db*"))


def _peak_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _raw(url: str, chars: int) -> dict[str, Any]:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=None)) as http,
        streamable_http_client(url, http_client=http, max_sse_event_size=None) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        before = _rss_mib()
        start = time.perf_counter()
        result = await session.call_tool("text", {"chars": chars})
        took = time.perf_counter() - start
        received = sum(len(getattr(block, "text", "")) for block in result.content)
        del result
    note = f"received {received:,} chars"
    return {"before": before, "call": took, "later": None, "disk": 0, "note": note}


async def _glove(url: str, chars: int, scenario: str, later: int, folder: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    limits = None
    if scenario in ("unbounded", "bridge-cut"):
        options["max_message_bytes"] = _OPEN
    if scenario == "unbounded":
        options["max_result_chars"] = _OPEN
        limits = ResultLimits(max_text_chars=_OPEN, max_render_chars=_OPEN)
    db = Path(folder) / f"{scenario}.db"
    call = ToolCall(id="c1", name="sizes__text", input={"chars": chars})
    model = ScriptedModel(["warm", [call], "ok"])
    store = SqliteStore(db, "conv")
    glove = Glove(
        model=model, system_prompt="bench", store=store, server_mode=True, result_limits=limits
    )
    entry = McpCatalogueEntry(id="sizes", name="Sizes", description="Large answers.", url=url)
    adapter = MemoryMcpAdapter("conv", active=["sizes"])
    async with await mount_mcp(glove, adapter, [entry], **options):
        glove.build()
        await glove.process_request("warm up")  # imports and first-request work, not measured
        before = _rss_mib()
        start = time.perf_counter()
        result = await glove.process_request("fetch it")
        took = time.perf_counter() - start
        [saved] = [r.result for m in result.messages for r in m.tool_results or []]
        note: str = saved.status
        if saved.status != "success":
            words = saved.message or ""
            limit = words[words.find("larger than") :].split(" (")[0]
            note = f"error result: {limit}" if "max_message_bytes" in words else words
        note += f", kept {len(saved.model_dump_json()):,} chars"
        del result, saved
        times = []
        for n in range(later):
            model.extend([f"later {n}"])
            start = time.perf_counter()
            await glove.process_request(f"later {n}")
            times.append(time.perf_counter() - start)
    await store.aclose()
    disk = _disk(folder, scenario)
    return {
        "before": before,
        "call": took,
        "later": statistics.median(times) if times else None,
        "disk": disk,
        "note": note[:80],
    }


def _child(args: argparse.Namespace) -> int:
    chars = args.chars
    with tempfile.TemporaryDirectory() as folder:
        if args.scenario == "raw":
            figures = asyncio.run(_raw(args.url, chars))
        else:
            figures = asyncio.run(_glove(args.url, chars, args.scenario, args.later, folder))
    figures["peak"] = _peak_mib()
    print(json.dumps(figures))
    return 0


def _run_child(url: str, scenario: str, chars: int, later: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", scenario, "--url", url, "--chars", str(chars)]
    command += ["--later", str(later)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"scenario {scenario} failed:\n{done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


async def _measure(sizes: list[float], later: int) -> dict[tuple[float, str], dict[str, Any]]:
    results: dict[tuple[float, str], dict[str, Any]] = {}
    async with spawn_server("sizes") as url:
        for size in sizes:
            chars = int(size * 1_000_000)
            for scenario in SCENARIOS:
                results[size, scenario] = await asyncio.to_thread(
                    _run_child, url, scenario, chars, later
                )
    return results


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:,.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="50,200", help="result sizes in MB, comma-separated")
    parser.add_argument("--later", type=int, default=5, help="later requests timed per run")
    parser.add_argument("--child", choices=SCENARIOS, help=argparse.SUPPRESS, dest="scenario")
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--chars", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario:
        return _child(args)
    sizes = [float(s) for s in args.sizes.split(",")]
    results = asyncio.run(_measure(sizes, args.later))

    print(
        f"large results bench: one text result of {args.sizes} MB; peak RSS = ru_maxrss of a "
        f"fresh process per scenario; Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s)"
    )
    header = (
        f"{'MB':>5} {'scenario':<11} {'stored MB':>10} {'peak MiB':>9} {'rise MiB':>9} "
        f"{'call ms':>9} {'later ms':>9}  outcome"
    )
    print(header)
    for size in sizes:
        for scenario in SCENARIOS:
            f = results[size, scenario]
            print(
                f"{size:>5g} {scenario:<11} {f['disk'] / 1e6:>10.2f} {f['peak']:>9.0f} "
                f"{f['peak'] - f['before']:>9.0f} {_ms(f['call']):>9} {_ms(f['later']):>9}  "
                f"{f['note']}"
            )
    big = max(sizes)
    naive, bounded = results[big, "unbounded"], results[big, "default"]
    cut = results[big, "bridge-cut"]
    later_ratio = (
        naive["later"] / bounded["later"] if naive["later"] and bounded["later"] else float("nan")
    )
    print(
        f"summary: a {big:g} MB result: stored {naive['disk'] / 1e6:.1f} MB unbounded vs "
        f"{bounded['disk'] / 1e6:.2f} MB default ({cut['disk'] / 1e6:.2f} MB cut by the bridge); "
        f"peak RSS {naive['peak']:.0f} vs {bounded['peak']:.0f} MiB "
        f"(raw SDK {results[big, 'raw']['peak']:.0f}); later request "
        f"{_ms(naive['later'])} vs {_ms(bounded['later'])} ms ({later_ratio:.0f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
