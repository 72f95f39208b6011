"""MCP overhead: what glove_mcp adds on top of the raw ``mcp`` client, measured in one run.

(a) Tool calls: 200 calls of the notes server's ``update_page`` made by a Glove (a
    ``ScriptedModel`` replies with 20 tool calls at a time; the loop runs the bridged tool,
    which goes through ``McpServerConnection``: auth flow, recovery bookkeeping, result
    conversion) against 200 raw ``ClientSession.call_tool`` calls on a session opened with the
    SDK alone (``streamable_http_client`` + ``ClientSession``, no glove code), to the same
    server, which runs in a child process so its CPU time is not charged to either side. The
    Glove side includes the agent loop itself (saving messages, building model requests), i.e.
    what a user of the agent pays; each round is one request in a new conversation.

    The sides are interleaved call by call: around every bridged call the bench makes one raw
    call on each baseline session, in a random order, and times those spans; the Glove
    side's time is the request's wall time minus them (so the bench's own wrapper counts
    against Glove). This machine's speed drifts by 20% or more within a second; two identical
    raw sessions timed in alternating 200-call blocks gave ratios from 0.80 to 1.39 (median
    1.07), call by call 0.93-1.04. A control row times a second raw session the same way, so
    the noise floor of each run is printed next to the figure. Both raw sides speak the
    protocol glove_mcp negotiates with these (2.x SDK) servers: the stateless 2026-07-28
    protocol, opened with ``server/discover``. The figure is the median of the rounds'
    glove / raw ratios. Target: <= 1.10.

    A context row compares the SDK used as documented (``initialize()``, the handshake
    protocol) with the raw stateless session, interleaved call by call in rounds of their
    own: kept out of the Glove rounds because the work an SSE answer leaves behind (the
    transport closing the stream) outlasts the turns of the event loop each span is given
    to finish its own work, and would land on the next side.

(b) Mount: ``mount_mcp`` with 10 active servers, each adding 200 ms to every connection's
    opening request (``connect_latency``), against ``mount_mcp`` with one such server. The
    servers run in one child process (so their CPU is not charged to the client); reload is
    parallel, so the ratio should stay near 1. Target: <= 1.3x. Context rows: the time of
    mounting the servers one after another; the same parallel opening done with the SDK
    alone (``ClientSession`` + ``streamable_http_client``, initialize + tools/list); and the
    client's CPU time per mount (what each extra server costs this process: SDK session, two
    HTTP requests — server/discover, tools/list — bridging, folding). Both sides pay the
    SDK's per-session CPU, on the client and (serialised, all servers share one child
    process) on the server, after the latency. The SDK-alone row uses the ``initialize``
    handshake, as ``ClientSession`` does unless told otherwise, so it shows what the
    negotiated protocol saves (three requests, a standalone GET stream and a DELETE at close
    per session). With the handshake (``protocol="legacy"``) glove_mcp measured 1.37-1.47x
    here.

Run: ``python bench/mcp_overhead.py [--calls 200] [--rounds 15] [--servers 10]``
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import platform
import random
import statistics
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from glove_core import Glove, ScriptedModel, Tool, ToolCall, ToolContext
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, bridge_mcp_tool, connect_mcp, mount_mcp
from glove_mcp.connect import McpClientPool
from glove_mcp.testing import spawn_server, spawn_servers

_PER_REPLY = 20  # tool calls per model reply on the Glove side
_ARGS = {"page_id": "p1", "body": "x"}


async def _glove_round(tools: list[Tool], calls: int) -> float:
    """One request of ``calls`` bridged calls, in a new conversation: each round starts from an
    empty history (a conversation that kept every round's results would make each model
    request, not the tool calls, grow round after round). Returns the wall seconds."""
    model = ScriptedModel([])
    glove = Glove(model=model, system_prompt="bench", server_mode=True)
    for tool in tools:
        glove.fold(tool)
    glove.build()
    replies: list[Any] = []
    for start in range(0, calls, _PER_REPLY):
        batch = [
            ToolCall(id=f"c{i}", name="notes__update_page", input=dict(_ARGS))
            for i in range(start, min(start + _PER_REPLY, calls))
        ]
        replies.append(batch)
    replies.append("done")
    model.extend(replies)
    began = time.perf_counter()
    result = await glove.process_request("update the page")
    elapsed = time.perf_counter() - began
    results = [r for m in result.messages for r in (m.tool_results or [])]
    if len(results) != calls or any(r.result.status != "success" for r in results):
        raise SystemExit(f"glove side failed: {[r.result for r in results][:3]}")
    return elapsed


async def _settle() -> None:
    """Let the event loop turn twice: the work a JSON answer leaves to run after the call has
    returned (the transport finishing that POST) is done by then (measured here)."""
    for _ in range(2):
        await asyncio.sleep(0)


async def _timed_call(session: ClientSession, side: str) -> float:
    """Seconds of one raw call, including the work it leaves behind (``_settle``)."""
    began = time.perf_counter()
    result = await session.call_tool("update_page", _ARGS)
    await _settle()
    if result.is_error:
        raise SystemExit(f"{side} side failed: {result}")
    return time.perf_counter() - began


def _interleaved(tool: Tool, baselines: dict[str, ClientSession], spent: dict[str, float]) -> Tool:
    """``tool`` with one raw call on every baseline session made around each of its calls, in
    a new random order each time; each raw call's seconds are added to ``spent``.

    Random, not rotated: a rotation keeps the same side before each side. Every call, the
    Glove's too, settles inside its own span, so none is charged for another's leftovers."""
    inner = tool.do
    sides = ["glove", *baselines]
    order = random.Random(6)

    async def do(input: Any, ctx: ToolContext) -> Any:
        answer: Any = None
        order.shuffle(sides)
        for side in sides:
            if side == "glove":
                answer = await inner(input, ctx)
                await _settle()
            else:
                spent[side] += await _timed_call(baselines[side], side)
        return answer

    return dataclasses.replace(tool, do=do)


async def _paired_rounds(
    sessions: dict[str, ClientSession], calls: int, rounds: int
) -> dict[str, list[float]]:
    """Seconds per round of each session's ``calls`` calls, interleaved call by call."""
    times: dict[str, list[float]] = {name: [] for name in sessions}
    order = random.Random(7)
    names = list(sessions)
    for _ in range(rounds):
        spent = dict.fromkeys(names, 0.0)
        for _ in range(calls):
            order.shuffle(names)
            for name in names:
                spent[name] += await _timed_call(sessions[name], name)
        for name, seconds in spent.items():
            times[name].append(seconds)
    return times


def _median_ratio(times: dict[str, list[float]], side: str, base: str) -> float:
    return statistics.median(a / b for a, b in zip(times[side], times[base], strict=True))


@dataclass(frozen=True)
class CallFigures:
    """Seconds per round of ``calls`` calls (medians), and medians of the rounds' ratios."""

    glove: float
    raw: float
    ratio: float
    control: float
    """A second raw session timed like the others: its ratio to ``raw`` is the noise floor."""
    control_ratio: float
    handshake: float
    """The SDK used as documented (``initialize()``), which talks the handshake protocol, in
    rounds of its own against ``handshake_raw``."""
    handshake_raw: float
    handshake_ratio: float
    """``handshake`` / ``handshake_raw``."""


async def _raw_session(stack: AsyncExitStack, url: str, *, discover: bool) -> ClientSession:
    client = await stack.enter_async_context(httpx2.AsyncClient())
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
    session = await stack.enter_async_context(ClientSession(read, write))
    if discover:
        await session.discover()  # the protocol glove_mcp negotiates with this server
    else:
        await session.initialize()
    return session


async def bench_calls(calls: int, rounds: int) -> CallFigures:
    """Rounds of ``calls`` bridged calls, each interleaved call by call with the raw sides;
    then the handshake context row's own rounds."""
    async with spawn_server("notes") as url, AsyncExitStack() as stack:
        baselines = {
            "raw": await _raw_session(stack, url, discover=True),
            "control": await _raw_session(stack, url, discover=True),
        }
        handshake = await _raw_session(stack, url, discover=False)
        pool = await stack.enter_async_context(McpClientPool())
        conn = await connect_mcp("notes", url, pool=pool)
        stack.push_async_callback(conn.close)
        if conn.protocol_version != baselines["raw"].protocol_version:
            raise SystemExit(f"protocols differ: {conn.protocol_version} vs raw")
        spent = dict.fromkeys(baselines, 0.0)
        tools = [
            _interleaved(bridge_mcp_tool(conn, t, server_mode=True), baselines, spent)
            for t in await conn.list_tools()
        ]
        for session in (*baselines.values(), handshake):
            for _ in range(20):  # warm-up
                await _timed_call(session, "warm-up")
        await _glove_round(tools, 20)
        times: dict[str, list[float]] = {name: [] for name in ("glove", *baselines)}
        for _ in range(rounds):
            for name in spent:
                spent[name] = 0.0
            wall = await _glove_round(tools, calls)
            times["glove"].append(wall - sum(spent.values()))
            for name, seconds in spent.items():
                times[name].append(seconds)
        context = await _paired_rounds(
            {"raw": baselines["raw"], "handshake": handshake}, calls, max(rounds // 3, 3)
        )
        return CallFigures(
            glove=statistics.median(times["glove"]),
            raw=statistics.median(times["raw"]),
            ratio=_median_ratio(times, "glove", "raw"),
            control=statistics.median(times["control"]),
            control_ratio=_median_ratio(times, "control", "raw"),
            handshake=statistics.median(context["handshake"]),
            handshake_raw=statistics.median(context["raw"]),
            handshake_ratio=_median_ratio(context, "handshake", "raw"),
        )


async def _mount_once(entries: list[McpCatalogueEntry], cpu: list[float] | None = None) -> float:
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="bench", server_mode=True)
    adapter = MemoryMcpAdapter("bench", active=[e.id for e in entries])
    began, began_cpu = time.perf_counter(), time.process_time()
    mount = await mount_mcp(glove, adapter=adapter, entries=entries)
    elapsed = time.perf_counter() - began
    if cpu is not None:
        cpu.append(time.process_time() - began_cpu)
    if len(mount.loaded) != len(entries):
        raise SystemExit(f"mount loaded {mount.loaded}, expected {len(entries)} servers")
    await mount.aclose()
    return elapsed


async def _raw_sessions_once(client: httpx2.AsyncClient, urls: list[str]) -> float:
    """The SDK alone: open a session to every URL in parallel (initialize + tools/list), each
    owned by its own task as it must be, then close them all; returns the opening time."""
    ready = asyncio.Barrier(len(urls) + 1)
    release = asyncio.Event()

    async def one(url: str) -> None:
        async with (
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await ready.wait()
            await release.wait()

    began = time.perf_counter()
    tasks = [asyncio.create_task(one(url)) for url in urls]
    await ready.wait()
    elapsed = time.perf_counter() - began
    release.set()
    await asyncio.gather(*tasks)
    return elapsed


@dataclass(frozen=True)
class MountFigures:
    """Medians, in seconds."""

    many: float
    one: float
    many_cpu: float
    one_cpu: float
    raw_many: float
    raw_one: float


async def bench_mount(servers: int, rounds: int, latency: float) -> MountFigures:
    """Median wall seconds of one mount (many servers, one server), the client's CPU seconds of
    each, and the same opening done with the SDK alone."""
    async with spawn_servers("notes", servers, connect_latency=latency) as urls:
        entries = [
            McpCatalogueEntry(id=f"s{i}", name=f"S{i}", description="notes", url=url)
            for i, url in enumerate(urls)
        ]
        await _mount_once(entries[:1])  # warm-up
        many: list[float] = []
        one: list[float] = []
        many_cpu: list[float] = []
        one_cpu: list[float] = []
        raw_many: list[float] = []
        raw_one: list[float] = []
        async with httpx2.AsyncClient() as raw_client:
            for _ in range(rounds):
                many.append(await _mount_once(entries, many_cpu))
                one.append(await _mount_once(entries[:1], one_cpu))
                raw_many.append(await _raw_sessions_once(raw_client, urls))
                raw_one.append(await _raw_sessions_once(raw_client, urls[:1]))
        return MountFigures(
            statistics.median(many),
            statistics.median(one),
            statistics.median(many_cpu),
            statistics.median(one_cpu),
            statistics.median(raw_many),
            statistics.median(raw_one),
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()

    calls = asyncio.run(bench_calls(args.calls, args.rounds))
    glove_s, raw_s = calls.glove, calls.raw
    mount = asyncio.run(bench_mount(args.servers, args.rounds, args.latency))
    many_s, one_s, many_cpu, one_cpu = mount.many, mount.one, mount.many_cpu, mount.one_cpu
    call_ratio = calls.ratio
    mount_ratio = many_s / one_s

    print(
        f"mcp overhead: median of {args.rounds} rounds; Python {platform.python_version()}, "
        f"{os.cpu_count()} CPU(s)"
    )
    print(f"{'measurement':<52} {'glove':>10} {'baseline':>10} {'ratio':>8}")
    print(
        f"{f'(a) {args.calls} tool calls, total ms':<52} {glove_s * 1e3:>10.1f} "
        f"{raw_s * 1e3:>10.1f} {call_ratio:>7.2f}x"
    )
    print(
        f"{'    per call, ms':<52} {glove_s * 1e3 / args.calls:>10.2f} "
        f"{raw_s * 1e3 / args.calls:>10.2f}"
    )
    print(
        f"{'    control: a second raw session, total ms':<52} {calls.control * 1e3:>10.1f} "
        f"{raw_s * 1e3:>10.1f} {calls.control_ratio:>7.2f}x"
    )
    print(
        f"{'    context: the SDK as documented (initialize), ms':<52} "
        f"{calls.handshake * 1e3:>10.1f} {calls.handshake_raw * 1e3:>10.1f} "
        f"{calls.handshake_ratio:>7.2f}x   (so glove is "
        f"{call_ratio / calls.handshake_ratio:.2f}x the SDK as documented)"
    )
    label = f"(b) mount {args.servers} servers vs 1 (+{args.latency * 1e3:.0f} ms), ms"
    print(f"{label:<52} {many_s * 1e3:>10.1f} {one_s * 1e3:>10.1f} {mount_ratio:>7.2f}x")
    sequential = args.servers * one_s
    print(
        f"{f'    vs {args.servers} one-server mounts in a row, ms':<52} {many_s * 1e3:>10.1f} "
        f"{sequential * 1e3:>10.1f} {many_s / sequential:>7.2f}x"
    )
    raw_label = f"    SDK alone, handshake: {args.servers} sessions vs 1, parallel, ms"
    print(
        f"{raw_label:<52} {mount.raw_many * 1e3:>10.1f} {mount.raw_one * 1e3:>10.1f} "
        f"{mount.raw_many / mount.raw_one:>7.2f}x"
    )
    extra = (many_cpu - one_cpu) / max(args.servers - 1, 1)
    print(
        f"{f'    client CPU per mount, ms ({args.servers} vs 1)':<52} {many_cpu * 1e3:>10.1f} "
        f"{one_cpu * 1e3:>10.1f}   (+{extra * 1e3:.1f} ms per extra server)"
    )
    ok = call_ratio <= 1.10 and mount_ratio <= 1.3
    print(
        f"summary: tool calls {call_ratio:.2f}x raw ClientSession (target <= 1.10), "
        f"mount {args.servers} servers {mount_ratio:.2f}x one server (target <= 1.3) — "
        f"{'both targets met' if ok else 'target missed'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
