"""The MCP overhead, server limits and large results benchmarks still run end to end (tiny
runs: their figures mean nothing here; benchmarks are not tests, so nothing about them is
asserted)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


async def run_bench(script: str, *args: str, seconds: float = 120) -> tuple[int, str, str]:
    """Run ``bench/<script>`` with ``args`` in a fresh process: exit status, stdout, stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BENCH / script),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), seconds)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_mcp_overhead_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench(
        "mcp_overhead.py", *("--calls", "4", "--rounds", "1", "--servers", "2", "--latency", "0")
    )
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("(a) 4 tool calls") for line in lines)
    assert any("control: a second raw session" in line for line in lines)
    assert lines[-1].startswith("summary: tool calls ")


async def test_server_limits_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench(
        "server_limits.py",
        *("--limit", "64", "--sessions", "12", "--slow", "4", "--rounds", "20"),
        *("--header-timeout", "0.5", "--sizes", "50,100", "--repeats", "2"),
    )
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("(a) 12 sessions under ulimit -n 64") for line in lines)
    assert any(line.startswith("(c) session creation") for line in lines)
    assert lines[-1].startswith("summary: under ulimit -n 64 ")


async def test_large_results_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench("large_results.py", *("--sizes", "0.2", "--later", "1"))
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.split()[:2] == ["0.2", "unbounded"] for line in lines)
    assert lines[-1].startswith("summary: a 0.2 MB result: stored ")


async def test_history_cost_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench("history_cost.py", "--quick")
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.split("|")[0].strip() == "2,000" for line in lines)
    assert lines[-1].startswith("summary: from 200 to 2,000 saved messages")


async def test_result_summaries_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench("result_summaries.py", *("--turns", "2", "--size-kb", "4"))
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.endswith("<- turn start") for line in lines)
    assert lines[-1].startswith("summary: over 6 calls with 4 KB results")


async def test_cache_hits_activation_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench("cache_hits.py", "--activation")
    lines = out.splitlines()
    assert code in (0, 1), err  # 1: the figure missed its target
    assert any(line.startswith("tools joining mid-conversation") for line in lines)
    assert lines[-1].startswith("summary: over 30 calls through AnthropicModel")


async def test_discovery_runs_a_sealed_set_and_prints_only_aggregates(tmp_path: Path) -> None:
    queries = tmp_path / "sealed.jsonl"
    queries.write_text(
        '{"query": "secret need number one in my inbox", "accept": ["gmail"], "kind": "task"}\n'
        '{"query": "secret need two: jira ticket", "accept": ["jira"], "kind": "vendor"}\n',
        encoding="utf-8",
    )
    catalogue = BENCH / "data" / "catalogue.json"
    code, out, err = await run_bench(
        "discovery.py",
        *("--catalogue", str(catalogue), "--queries", str(queries)),
        *("--no-semantic", "--size", "200"),
    )
    assert code in (0, 1), err  # 1: the targets were missed (a benchmark asserts nothing)
    lines = out.splitlines()
    assert any(line.split()[:3] == ["default", "task", "1"] for line in lines)
    assert any(line.split()[:3] == ["default", "vendor", "1"] for line in lines)
    assert "secret need" not in out
    assert lines[-1].startswith("SUMMARY ")
    code, _, err = await run_bench("discovery.py", "--queries", str(queries), "--misses")
    assert code == 2 and "--misses lists queries" in err


async def test_multi_instance_runs_and_prints_its_summary(postgres_server: object) -> None:
    # postgres_server: skipped (or failed, in CI) where PostgreSQL cannot run; the bench
    # starts a server of its own.
    code, out, err = await run_bench(
        "multi_instance.py",
        *("--sessions", "2", "--requests", "1", "--concurrency", "2", "--instances", "1"),
        seconds=180,
    )
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("postgres x1") for line in lines)
    assert lines[-1].startswith("summary: postgres x1 serves ")


async def test_auth_runs_and_prints_its_summary() -> None:
    code, out, err = await run_bench("auth.py", *("--requests", "40", "--rounds", "2"))
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("1000 keys ") for line in lines)
    assert lines[-1].startswith("summary: 40 requests per variant; 1000 keys ")


async def test_loop_overhead_runs_its_trees_with_the_opentelemetry_sdk() -> None:
    code, out, err = await run_bench(
        "loop_overhead.py",
        *("--mode", "sequential", "--requests", "1", "--repeats", "1", "--warmup", "0"),
        *("--pairs", "1", "--baseline", "HEAD", "--tracing", "sdk"),
        seconds=180,
    )
    assert code == 0, err
    assert "both trees with the OpenTelemetry SDK configured" in out
    assert "today / HEAD:" in out
