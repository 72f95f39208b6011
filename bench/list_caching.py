"""List caching on mount: ``tools/list`` requests per mount, and mounts per minute, with and
without the cache, on a catalogue of 10 local servers.

Each server is the notes server on loopback, answering its lists with ``ttlMs`` 300000 and
``cacheScope: "public"`` (2026-07-28). A "conversation" is one ``mount_mcp`` of all ten
servers on a fresh Glove and adapter, then ``aclose()`` — what the headless server does for
each new session. Both arms share one ``McpClientPool`` across their mounts, as ``glove-mcp
serve`` does; the baseline's pool has ``ListCache(enabled=False)`` (every mount lists, as before
list caching). The arms alternate mount by mount so a noisy machine slows both alike. The
servers count the requests per method.

Run: python bench/list_caching.py [--mounts 20]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from contextlib import AsyncExitStack

from mcp.server.caching import CacheHint

from glove_core import Glove, ScriptedModel
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.connect import ListCache, McpClientPool
from glove_mcp.testing import McpTestServer
from glove_mcp.testing.servers import build_notes_server

SERVERS = 10
TTL_MS = 300_000
LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def cached_notes(index: int) -> McpTestServer:
    hint = CacheHint(ttl_ms=TTL_MS, scope="public")
    server = build_notes_server(
        f"notes{index}",
        cache_hints={method: hint for method in LISTS},
    )
    return McpTestServer(server)


async def mount_once(pool: McpClientPool, entries: list[McpCatalogueEntry], n: int) -> float:
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="s", server_mode=True)
    adapter = MemoryMcpAdapter(f"conversation-{n}", active=[e.id for e in entries])
    started = time.perf_counter()
    mount = await mount_mcp(glove, adapter, entries, pool=pool)
    elapsed = time.perf_counter() - started
    loaded = len(mount.loaded)
    await mount.aclose()
    if loaded != SERVERS:
        raise RuntimeError(f"mount {n} loaded {loaded} of {SERVERS} servers")
    return elapsed


def counts(servers: list[McpTestServer], method: str) -> int:
    return sum(s.control.methods[method] for s in servers)


async def run(mounts: int) -> int:
    async with AsyncExitStack() as stack:
        servers = [await stack.enter_async_context(cached_notes(i)) for i in range(SERVERS)]
        entries = [
            McpCatalogueEntry(id=f"notes{i}", name=f"Notes {i}", description="pages", url=s.url)
            for i, s in enumerate(servers)
        ]
        cached = await stack.enter_async_context(McpClientPool())
        plain = await stack.enter_async_context(McpClientPool(list_cache=ListCache(enabled=False)))
        arms = {"no cache": plain, "list cache": cached}
        seconds = dict.fromkeys(arms, 0.0)
        lists = {name: dict.fromkeys(LISTS, 0) for name in arms}
        await mount_once(plain, entries, -1)  # warm-up: imports, sockets
        for n in range(mounts):
            for name, pool in arms.items():
                before = {m: counts(servers, m) for m in LISTS}
                seconds[name] += await mount_once(pool, entries, n)
                for m in LISTS:
                    lists[name][m] += counts(servers, m) - before[m]
    print(f"{SERVERS} servers per mount, {mounts} mounts per arm")
    print(f"{'':<12}{'tools/list':>12}{'all lists':>11}{'mounts/min':>12}{'ms/mount':>10}")
    for name in arms:
        tools = lists[name]["tools/list"] / mounts
        every = sum(lists[name].values()) / mounts
        per_minute = 60 * mounts / seconds[name]
        print(
            f"{name:<12}{tools:>12.2f}{every:>11.2f}{per_minute:>12.0f}"
            f"{1000 * seconds[name] / mounts:>10.1f}"
        )
    saved = lists["no cache"]["tools/list"] - lists["list cache"]["tools/list"]
    ratio = seconds["no cache"] / seconds["list cache"]
    print(
        f"summary: list caching saved {saved} of {lists['no cache']['tools/list']} tools/list "
        f"requests over {mounts} mounts of {SERVERS} servers "
        f"({lists['list cache']['tools/list'] / mounts:.2f} vs "
        f"{lists['no cache']['tools/list'] / mounts:.2f} per mount); "
        f"{ratio:.2f}x the mounts per minute of the uncached baseline"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mounts", type=int, default=20, help="mounts per arm (default 20)")
    args = parser.parse_args()
    return asyncio.run(run(args.mounts))


if __name__ == "__main__":
    sys.exit(main())
