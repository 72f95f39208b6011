"""Prompt-cache hits of AnthropicModel over a 30-call conversation, against the fake API.

The conversation (10 requests x 3 model calls) is the runtime-context issue's: an iteration
context value changes every call, a request context value every request, a history context value
3 times, and 2 outside events arrive mid-turn. The ModelRequests are built exactly as the loop
builds them — saved history, the request-frozen context inserted just before the request's
message (``request_context_index``), and a transient iteration message after ``saved_count`` —
and sent through ``AnthropicModel`` and the real ``anthropic`` SDK to the fake Messages API,
whose prompt-cache imitation reports ``cache_read_input_tokens``.

Four runs of the same conversation, each against a fresh cache:

- ``runtime ctx``: as above, caching on (breakpoints on tools, system, before the request
  context and on the last saved block).
- ``cache off``: the same requests, ``AnthropicModel(cache=False)``.
- ``live in system``: the naive design: all live state re-rendered into the system prompt before
  every call, no runtime messages, caching on.
- ``Glove loop``: the same conversation through the real ``Glove`` — context providers
  (``add_context_provider``), tools that run, and ``emit_event`` from inside a tool — to check
  that the loop builds its requests the way the first run assumes.

Then the conversations of issue 18 (``bench/_activation.py``): two servers activated mid-way,
and a ``tools/list_changed``, each with deferral on and off, through ``AnthropicModel`` and
through ``OpenAICompatModel``.

Run: python bench/cache_hits.py            (everything)
     python bench/cache_hits.py --activation   (only the issue-18 conversations)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from dataclasses import dataclass, field
from typing import Literal

import _activation  # bench/_activation.py, beside this script

from glove_core import (
    AbortSignal,
    AnthropicModel,
    CacheCollapse,
    Glove,
    Message,
    ModelRequest,
    SubscriberEvent,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultData,
    Usage,
)
from glove_core.subscribers import TokenConsumption
from glove_core.testing import FakeItem, FakeToolUse, serve_fake_anthropic
from glove_core.tools import ToolSpec

__all__ = ["main"]

Variant = Literal["runtime ctx", "cache off", "live in system", "Glove loop"]

REQUESTS = 10
CALLS_PER_REQUEST = 3
HISTORY_CHANGES_AT = {0, 4, 7}
EVENTS_AT = {2, 6}
EXTRA_TOOLS = 14
# Anthropic's input prices relative to uncached input (5-minute cache writes).
WRITE_PRICE = 1.25
READ_PRICE = 0.1
SYSTEM = (
    "You are a release assistant for a software team. You check builds, read changelogs and "
    "answer questions about the state of a release. Be precise and brief. " * 6
)


def tool_specs() -> list[ToolSpec]:
    """Two working tools and MCP-like tools of a realistic size."""
    specs = [
        ToolSpec(
            "check_build",
            "Check the status of a CI build.",
            {
                "type": "object",
                "properties": {"build": {"type": "integer", "description": "The build number."}},
                "required": ["build"],
            },
        ),
        ToolSpec(
            "read_changelog",
            "Read the changelog of a version.",
            {
                "type": "object",
                "properties": {"version": {"type": "string", "description": 'e.g. "2.4.0".'}},
                "required": ["version"],
            },
        ),
    ]
    for i in range(EXTRA_TOOLS):
        server = "notes" if i % 2 else "tracker"
        properties: dict[str, object] = {
            f"field_{j}": {
                "type": "string",
                "description": f"Field {j} of the {server} record; free text, at most 2,000 "
                "characters, markdown allowed.",
            }
            for j in range(6)
        }
        properties["limit"] = {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
        specs.append(
            ToolSpec(
                f"{server}__operation_{i}",
                f"Operation {i} on the {server} workspace: reads or changes records the "
                "signed-in user can see. Returns the affected records as JSON.",
                {"type": "object", "properties": properties, "required": ["field_0"]},
            )
        )
    return specs


def script() -> list[FakeItem]:
    """The model's 30 replies: two tool calls, then an answer, per request."""
    items: list[FakeItem] = []
    for r in range(REQUESTS):
        items.append(FakeToolUse("check_build", {"build": 800 + r}, id=f"r{r}-0"))
        items.append(FakeToolUse("read_changelog", {"version": f"2.{r}.0"}, id=f"r{r}-1"))
        items.append(f"Release 2.{r}.0 looks healthy: build {800 + r} passed.")
    return items


def tool_output(call: ToolCall) -> str:
    if call.name == "check_build":
        return f"Build {call.input['build']}: passed 1,204 tests in 14m. Artifacts uploaded. " * 4
    return f"Changelog {call.input['version']}: fixed login redirect; faster search. " * 5


@dataclass
class Conversation:
    """Saved history and the live state the context providers would read."""

    history: list[Message] = field(default_factory=list)
    call: int = 0
    request: int = 0
    plan_version: int = 0

    def iteration_state(self) -> str:
        return f"Dashboard at call {self.call}: 3 deploys running, queue depth {self.call % 7}."

    def request_state(self) -> str:
        return f"Signed-in user: dana (request {self.request}, plan: team)."

    def plan_state(self) -> str:
        return f"Release plan v{self.plan_version}: freeze Friday, ship Monday."


def build_request(
    conv: Conversation, request_index: int, variant: Variant, tools: list[ToolSpec]
) -> ModelRequest:
    """One model call's request, as the loop assembles it."""
    if variant == "live in system":
        system = "\n".join(
            [SYSTEM, conv.plan_state(), conv.request_state(), conv.iteration_state()]
        )
        return ModelRequest(
            system=system, tools=tools, messages=list(conv.history), conversation_id="bench"
        )
    frozen = Message(sender="user", text=conv.request_state(), framework_context="runtime")
    messages = [*conv.history[:request_index], frozen, *conv.history[request_index:]]
    saved_count = len(messages)
    messages.append(
        Message(sender="user", text=conv.iteration_state(), framework_context="runtime")
    )
    return ModelRequest(
        system=SYSTEM,
        tools=tools,
        messages=messages,
        saved_count=saved_count,
        request_context_index=request_index,
        conversation_id="bench",
    )


async def noop(*_: object) -> None:
    return None


async def run(variant: Variant) -> tuple[list[Usage], int]:
    """Play the conversation; return each call's usage and the cache_collapse event count."""
    tools = tool_specs()
    conv = Conversation()
    usages: list[Usage] = []
    collapses = 0

    async def notify(event: SubscriberEvent) -> None:
        nonlocal collapses
        if isinstance(event, CacheCollapse):
            collapses += 1

    async with serve_fake_anthropic() as fake:
        fake.script(*script())
        model = AnthropicModel(
            "claude-bench", api_key="bench", base_url=fake.base_url, cache=variant != "cache off"
        )
        async with model:
            for r in range(REQUESTS):
                conv.request = r
                if r in HISTORY_CHANGES_AT:
                    conv.plan_version += 1
                    if variant != "live in system":
                        text = f'<context key="plan">{conv.plan_state()}</context>'
                        conv.history.append(
                            Message(sender="user", text=text, framework_context="runtime")
                        )
                request_index = len(conv.history)
                conv.history.append(Message(sender="user", text=f"How is release 2.{r}.0 doing?"))
                for step in range(CALLS_PER_REQUEST):
                    request = build_request(conv, request_index, variant, tools)
                    response = await model.prompt(request, notify)
                    conv.call += 1
                    usages.append(response.usage)
                    conv.history.append(response.message)
                    calls = response.message.tool_calls or []
                    if calls:
                        results = [
                            ToolResult(
                                call_id=c.id,
                                name=c.name,
                                result=ToolResultData(data=tool_output(c)),
                            )
                            for c in calls
                        ]
                        conv.history.append(Message(sender="user", tool_results=results))
                    if r in EVENTS_AT and step == 0:
                        event = (
                            f'<event source="webhook:ci" kind="build.finished">Build {801 + r} '
                            "finished: green.</event>"
                        )
                        conv.history.append(
                            Message(sender="user", text=event, framework_context="event")
                        )
        assert fake.pending == 0, "the script was not used up"
    return usages, collapses


async def run_glove() -> tuple[list[Usage], int]:
    """The conversation through the real loop; return each call's usage and collapse count."""
    conv = Conversation()
    usages: list[Usage] = []
    collapses = 0

    class Counter:
        async def record(self, event: SubscriberEvent) -> None:
            nonlocal collapses
            if isinstance(event, TokenConsumption):
                usages.append(event.usage)
                conv.call += 1
            elif isinstance(event, CacheCollapse):
                collapses += 1

    def make_tool(spec: ToolSpec) -> Tool:
        async def do(arguments: dict[str, object], ctx: ToolContext) -> str:
            if spec.name == "check_build" and conv.request in EVENTS_AT:
                await ctx.glove.emit_event(
                    id=f"evt-{conv.request}",
                    source="webhook:ci",
                    kind="build.finished",
                    content=f"Build {801 + conv.request} finished: green.",
                )
            return tool_output(ToolCall(id=ctx.call_id, name=spec.name, input=arguments))

        return Tool(
            name=spec.name, description=spec.description, do=do, json_schema=spec.input_schema
        )

    def iteration(signal: AbortSignal) -> str:
        return conv.iteration_state()

    def request_state(signal: AbortSignal) -> str:
        return conv.request_state()

    def plan(signal: AbortSignal) -> str:
        return conv.plan_state()

    async with serve_fake_anthropic() as fake:
        fake.script(*script())
        async with AnthropicModel("claude-bench", api_key="bench", base_url=fake.base_url) as model:
            glove = Glove(model=model, system_prompt=SYSTEM)
            for spec in tool_specs():
                glove.fold(make_tool(spec))
            glove.build()
            glove.add_context_provider(iteration)
            glove.add_context_provider(request_state, delivery="request")
            glove.add_context_provider(plan, delivery="history", key="plan")
            glove.add_subscriber(Counter())
            for r in range(REQUESTS):
                conv.request = r
                if r in HISTORY_CHANGES_AT:
                    conv.plan_version += 1
                await glove.process_request(f"How is release 2.{r}.0 doing?")
            await glove.aclose()
        assert fake.pending == 0, "the script was not used up"
    return usages, collapses


def total(usage: Usage) -> int:
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def read_share(usages: list[Usage]) -> float:
    return sum(u.cache_read_tokens for u in usages) / max(1, sum(total(u) for u in usages))


def full_price(usages: list[Usage]) -> int:
    """Input tokens not read from the cache (sent uncached or written to the cache)."""
    return sum(u.input_tokens + u.cache_write_tokens for u in usages)


def relative_cost(usages: list[Usage]) -> float:
    """Input cost at Anthropic's cache prices, relative to sending everything uncached."""
    cost = sum(
        u.input_tokens + WRITE_PRICE * u.cache_write_tokens + READ_PRICE * u.cache_read_tokens
        for u in usages
    )
    return cost / max(1, sum(total(u) for u in usages))


async def measure() -> dict[Variant, tuple[list[Usage], int]]:
    variants: list[Variant] = ["runtime ctx", "cache off", "live in system"]
    results = {v: await run(v) for v in variants}
    results["Glove loop"] = await run_glove()
    return results


def activation_report() -> tuple[str, bool]:
    """Print the issue-18 table; return its summary and whether it meets the target."""
    results = asyncio.run(_activation.measure())
    columns = _activation.COLUMNS
    print()
    print("tools joining mid-conversation: cache-read tokens / input tokens per model call")
    print("  on = deferred (Anthropic) / stand-in tool (OpenAI-compatible); off = not deferred")
    heads = [f"{p[:4]} {c[:10]} {'on' if d else 'off'}" for p, c, d in columns]
    print(f"{'call':>4}  " + "  ".join(f"{h:>20}" for h in heads))
    rows = zip(*(results[c][0] for c in columns), strict=True)
    for i, usages in enumerate(rows, start=1):
        cells = [u.cache_read_tokens / max(1, total(u)) for u in usages]
        print(f"{i:>4}  " + "  ".join(f"{c:>20.1%}" for c in cells))
    print(f"{'all':>4}  " + "  ".join(f"{read_share(results[c][0]):>20.1%}" for c in columns))
    print(
        f"{'cost':>4}  "
        + "  ".join(f"{relative_cost(results[c][0]):>20.1%}" for c in columns)
        + "   (input cost vs uncached, Anthropic prices)"
    )
    print(f"{'coll':>4}  " + "  ".join(f"{results[c][1]:>20}" for c in columns))
    print(
        f"{'full':>4}  "
        + "  ".join(f"{full_price(results[c][0][1:]):>20}" for c in columns)
        + "   (tokens not read from cache, after the first call)"
    )

    def share(p: _activation.Provider, c: _activation.Conversation, d: bool) -> float:
        return read_share(results[(p, c, d)][0])

    def fewer(p: _activation.Provider, c: _activation.Conversation) -> str:
        on, off = (full_price(results[(p, c, d)][0][1:]) for d in (True, False))
        return f"{off / max(1, on):.1f}x"

    meets = all(share("anthropic", c, True) >= 0.9 for c in _activation.CONVERSATIONS)
    calls = len(results[columns[0]][0])
    summary = (
        f"over {calls} calls through AnthropicModel, {share('anthropic', 'activation', True):.1%} "
        f"of input tokens read from cache with two servers activated mid-way (vs "
        f"{share('anthropic', 'activation', False):.1%} not deferred) and "
        f"{share('anthropic', 'list_changed', True):.1%} with a list_changed (vs "
        f"{share('anthropic', 'list_changed', False):.1%}); OpenAI-compatible with the stand-in "
        f"tool {share('openai', 'activation', True):.1%} and "
        f"{share('openai', 'list_changed', True):.1%} (vs "
        f"{share('openai', 'activation', False):.1%} and "
        f"{share('openai', 'list_changed', False):.1%}); after the first call "
        f"{fewer('anthropic', 'activation')} and {fewer('anthropic', 'list_changed')} fewer "
        f"tokens at full price on Anthropic, {fewer('openai', 'activation')} and "
        f"{fewer('openai', 'list_changed')} on OpenAI-compatible; "
        f"{'meets' if meets else 'misses'} the >= 90% target"
    )
    return summary, meets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--activation", action="store_true", help="run only the issue-18 conversations"
    )
    args = parser.parse_args()
    # The naive run collapses the cache on purpose; count the events instead of logging each.
    logging.getLogger("glove_core.models").setLevel(logging.ERROR)
    if args.activation:
        summary, meets = activation_report()
        print(f"summary: {summary}")
        return 0 if meets else 1
    results = asyncio.run(measure())
    ours, collapses = results["runtime ctx"]
    off, _ = results["cache off"]
    naive, naive_collapses = results["live in system"]
    loop, loop_collapses = results["Glove loop"]
    print("cache-read tokens / total input tokens, per model call (fake Messages API)")
    print(
        f"{'call':>4}  {'input':>7}  {'runtime ctx':>11}  {'cache off':>9}  "
        f"{'live in system':>14}  {'Glove loop':>10}"
    )
    for i, runs in enumerate(zip(ours, off, naive, loop, strict=True), start=1):
        a, b, c, d = (u.cache_read_tokens / max(1, total(u)) for u in runs)
        print(f"{i:>4}  {total(runs[0]):>7}  {a:>11.1%}  {b:>9.1%}  {c:>14.1%}  {d:>10.1%}")
    after_first = read_share(ours[1:])
    print(
        f"{'all':>4}  {sum(total(u) for u in ours):>7}  {read_share(ours):>11.1%}  "
        f"{read_share(off):>9.1%}  {read_share(naive):>14.1%}  {read_share(loop):>10.1%}"
    )
    print(
        f"{'cost':>4}  {'':>7}  {relative_cost(ours):>11.1%}  {relative_cost(off):>9.1%}  "
        f"{relative_cost(naive):>14.1%}  {relative_cost(loop):>10.1%}   (input cost vs uncached)"
    )
    print(
        f"cache_collapse events: runtime ctx {collapses}, live in system {naive_collapses}, "
        f"Glove loop {loop_collapses}"
    )
    verdict = "meets" if after_first >= 0.9 and read_share(loop[1:]) >= 0.9 else "misses"
    print(
        f"runtime context: {after_first:.1%} of input tokens read from cache after the first "
        f"call with "
        f"runtime context ({read_share(loop[1:]):.1%} through the Glove loop) vs "
        f"{read_share(off[1:]):.1%} with caching off and {read_share(naive[1:]):.1%} with live "
        f"state in the system prompt; input cost {relative_cost(ours):.1%} vs "
        f"{relative_cost(naive):.1%} of uncached; {verdict} the >= 90% target over "
        f"{len(ours)} calls"
    )
    summary, meets = activation_report()
    print(f"summary: runtime context {verdict} the >= 90% target ({after_first:.1%}); {summary}")
    return 0 if verdict == "meets" and meets else 1


if __name__ == "__main__":
    sys.exit(main())
