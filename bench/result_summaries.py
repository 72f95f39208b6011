"""Tool-result summaries: input tokens per call over a 30-call conversation with large results.

The conversation: 10 user turns, each with 3 model calls — ``search_docs`` (a 20 KB result that
carries its own summary), ``read_log`` (a 20 KB result without one: sent as head and tail once
it is old), then an answer. It runs through the real ``Glove`` loop, ``AnthropicModel`` and the
real ``anthropic`` SDK against the fake Messages API, whose prompt-cache imitation reports
``cache_read_input_tokens`` and ``cache_creation_input_tokens``.

Two runs of the same conversation, each against a fresh cache:

- ``whole``: the baseline, ``Glove()`` as before: every result is re-sent in full forever.
- ``summaries``: ``Glove(result_summaries=ResultSummaries())``: results older than the last
  user turn are sent as summaries.

Per call: the prompt's tokens (uncached input + cache read + cache write) and the cache reads
and writes. What summaries cost the cache: at the first call of every user turn the previous
turn's results change from whole to summary, so the prefix from there on is written to the
cache again — once per user turn, never within one. The table shows those writes; the
adapter reports each as a ``cache_collapse`` event with cause ``summaries`` (expected), not
``unexpected``.

Run: ``python bench/result_summaries.py [--turns 10] [--size-kb 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections import Counter
from typing import Any

from glove_core import (
    AnthropicModel,
    Glove,
    ResultSummaries,
    SubscriberEvent,
    Tool,
    ToolContext,
    ToolResultData,
    Usage,
)
from glove_core.subscribers import CacheCollapse, TokenConsumption
from glove_core.testing import FakeItem, FakeToolUse, serve_fake_anthropic

__all__ = ["main"]

SYSTEM = "You are a release engineer's assistant. Answer from the documents and logs you read."
WRITE_PRICE = 1.25  # Anthropic's prices relative to uncached input (5-minute cache)
READ_PRICE = 0.1
CALLS_PER_TURN = 3
MIN_CACHE = 1024  # the fake's (and the API's) smallest cacheable prefix, in tokens


def document(kind: str, turn: int, size: int) -> str:
    """``size`` characters of varied text, different per turn."""
    line = f"{kind} {turn}: build 8{turn:02d} step {{n}} finished in {{t}} ms, status ok.\n"
    out: list[str] = []
    n = 0
    while sum(len(x) for x in out) < size:
        out.append(line.format(n=n, t=(n * 37 + turn) % 997))
        n += 1
    return "".join(out)[:size]


def tools(size: int) -> list[Tool]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"turn": {"type": "integer"}},
        "required": ["turn"],
    }

    async def search_docs(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        turn = int(input["turn"])
        return ToolResultData(
            data=document("doc", turn, size),
            summary=f"search for release 2.{turn}: {size // 60} matching steps, all ok",
        )

    async def read_log(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        return ToolResultData(data=document("log", int(input["turn"]), size))

    return [
        Tool("search_docs", "Search the release documents.", search_docs, json_schema=schema),
        Tool("read_log", "Read a build log.", read_log, json_schema=schema),
    ]


def script(turns: int) -> list[FakeItem]:
    items: list[FakeItem] = []
    for turn in range(turns):
        items.append(FakeToolUse("search_docs", {"turn": turn}, id=f"s{turn}"))
        items.append(FakeToolUse("read_log", {"turn": turn}, id=f"l{turn}"))
        items.append(f"Release 2.{turn}.0: every step passed.")
    return items


async def run(
    summaries: ResultSummaries | None, turns: int, size: int
) -> tuple[list[Usage], Counter[str]]:
    """Play the conversation; return each call's usage and the causes of cache collapses."""
    usages: list[Usage] = []
    causes: Counter[str] = Counter()

    class Recorder:
        async def record(self, event: SubscriberEvent) -> None:
            if isinstance(event, TokenConsumption):
                usages.append(event.usage)
            elif isinstance(event, CacheCollapse):
                causes[event.cause] += 1

    async with serve_fake_anthropic() as fake:
        fake.script(*script(turns))
        async with AnthropicModel("claude-bench", api_key="bench", base_url=fake.base_url) as model:
            glove = Glove(model=model, system_prompt=SYSTEM, result_summaries=summaries)
            for t in tools(size):
                glove.fold(t)
            glove.build().add_subscriber(Recorder())
            for turn in range(turns):
                await glove.process_request(f"How did release 2.{turn}.0 go?")
            await glove.aclose()
        assert fake.pending == 0, "the script was not used up"
    return usages, causes


def prompt(u: Usage) -> int:
    return u.input_tokens + u.cache_read_tokens + u.cache_write_tokens


def cost(usages: list[Usage]) -> float:
    """Input cost in uncached-token units at the cache prices."""
    return sum(
        u.input_tokens + WRITE_PRICE * u.cache_write_tokens + READ_PRICE * u.cache_read_tokens
        for u in usages
    )


async def measure(
    turns: int, size: int
) -> tuple[tuple[list[Usage], Counter[str]], tuple[list[Usage], Counter[str]]]:
    return await run(None, turns, size), await run(ResultSummaries(), turns, size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10, help="user turns (3 calls each)")
    parser.add_argument("--size-kb", type=float, default=20, help="size of each tool result")
    args = parser.parse_args()
    if args.turns < 2:
        parser.error("--turns must be at least 2 (summaries start at the second user turn)")
    size = int(args.size_kb * 1024)
    if size < ResultSummaries().min_chars:
        parser.error(f"--size-kb must be at least {ResultSummaries().min_chars / 1024:.2f}")
    logging.getLogger("glove_core.models").setLevel(logging.ERROR)
    (whole, whole_causes), (summarised, causes) = asyncio.run(measure(args.turns, size))
    calls = args.turns * CALLS_PER_TURN
    print(
        f"tokens per model call: {args.turns} user turns x {CALLS_PER_TURN} calls, two "
        f"{args.size_kb:g} KB tool results per turn (fake Messages API, AnthropicModel)"
    )
    header = (
        f"{'call':>4} {'turn':>4} | {'whole: prompt':>13} {'read':>7} {'write':>7} | "
        f"{'summ.: prompt':>13} {'read':>7} {'write':>7}"
    )
    print(header)
    print("-" * len(header))
    for i, (w, s) in enumerate(zip(whole, summarised, strict=True)):
        mark = " <- turn start" if i % CALLS_PER_TURN == 0 and i > 0 else ""
        print(
            f"{i + 1:>4} {i // CALLS_PER_TURN + 1:>4} | {prompt(w):>13,} {w.cache_read_tokens:>7,} "
            f"{w.cache_write_tokens:>7,} | {prompt(s):>13,} {s.cache_read_tokens:>7,} "
            f"{s.cache_write_tokens:>7,}{mark}"
        )
    total_w, total_s = sum(map(prompt, whole)), sum(map(prompt, summarised))
    starts = range(CALLS_PER_TURN, calls, CALLS_PER_TURN)
    rewrite_s = sum(summarised[i].cache_write_tokens for i in starts)
    rewrite_w = sum(whole[i].cache_write_tokens for i in starts)
    share_w = sum(u.cache_read_tokens for u in whole) / max(1, total_w)
    share_s = sum(u.cache_read_tokens for u in summarised) / max(1, total_s)
    print(
        f"totals: prompt tokens {total_w:,} whole vs {total_s:,} with summaries; read from the "
        f"cache {share_w:.0%} vs {share_s:.0%}; cache writes "
        f"{sum(u.cache_write_tokens for u in whole):,} vs "
        f"{sum(u.cache_write_tokens for u in summarised):,}; cost at cache prices "
        f"{cost(whole):,.0f} vs {cost(summarised):,.0f} uncached-token units"
    )
    # Within a turn the prefix only grows: each call should read the whole previous prompt
    # from the cache (unless that prompt was below the cache's minimum size).
    within = [
        i for i in range(1, calls) if i % CALLS_PER_TURN and prompt(summarised[i - 1]) >= MIN_CACHE
    ]
    full = sum(summarised[i].cache_read_tokens >= prompt(summarised[i - 1]) for i in within)
    print(
        f"the cache re-write: the {len(starts)} turn starts wrote {rewrite_s:,} tokens with "
        f"summaries ({rewrite_w:,} whole); within turns, {full} of {len(within)} calls read "
        "the whole previous prompt from the cache"
    )

    def listed(counter: Counter[str]) -> str:
        return ", ".join(f"{k} x{v}" for k, v in sorted(counter.items())) or "none"

    print(f"cache_collapse events: {listed(causes)} with summaries; {listed(whole_causes)} whole")
    print(
        f"summary: over {calls} calls with {args.size_kb:g} KB results, summaries send "
        f"{total_s / total_w:.2f}x the prompt tokens and cost "
        f"{cost(summarised) / cost(whole):.2f}x at cache prices; the cache is re-written "
        f"once per user turn ({rewrite_s:,} tokens at {len(starts)} turn starts vs "
        f"{rewrite_w:,} without summaries)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
