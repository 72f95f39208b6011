"""How much of each model request is a cacheable prefix of the previous one.

A scripted 30-call conversation (10 requests x 3 model calls) where an iteration provider
changes every call, a request provider every request, a history provider 3 times, and 2 outside
events arrive mid-turn. Each request is serialised in Anthropic order (tools, system, messages),
one block per tool / system / message. For each call we count the bytes of the leading blocks
that are byte-identical to the previous call's request up to its last saved block (the
prompt-cache boundary: transient iteration context is never part of it), and report that as a
share of the call's bytes.

The baseline runs the same conversation the naive way: all live state re-rendered into the
system prompt before every call, nothing in runtime messages.

Run: python bench/cache_prefix.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from glove_core import (
    AbortSignal,
    Glove,
    ModelRequest,
    ScriptedModel,
    Tool,
    ToolCall,
    ToolContext,
    tool,
)

REQUESTS = 10
EXTRA_TOOLS = 14  # MCP-like tools with realistic schemas, so tools weigh what they do in use
CALLS_PER_REQUEST = 3
HISTORY_CHANGES_AT = {0, 4, 7}
EVENTS_AT = {2, 6}
SYSTEM = (
    "You are a release assistant for a software team. You check builds, read changelogs and "
    "answer questions about the state of a release. Be precise and brief. " * 6
)


@dataclass
class LiveState:
    """The application state the providers read."""

    call: int = 0
    request: int = 0
    plan_version: int = 0
    blocks: list[list[bytes]] = field(default_factory=list)
    saved: list[int] = field(default_factory=list)


def serialise(request: ModelRequest) -> tuple[list[bytes], int]:
    """Blocks in Anthropic order, and how many of them are saved (the cacheable prefix)."""
    blocks = [
        json.dumps(
            {"name": t.name, "description": t.description, "input_schema": t.input_schema},
            sort_keys=True,
        ).encode()
        for t in request.tools
    ]
    blocks.append(request.system.encode())
    saved_blocks = len(blocks) + request.saved_count
    blocks += [m.model_dump_json(exclude={"id"}).encode() for m in request.messages]
    return blocks, saved_blocks


def prefix_share(blocks: list[list[bytes]], saved: list[int], skip: int = 0) -> list[float]:
    """Per call (from the second), the share of its bytes that repeat the previous call's saved
    prefix; ``skip`` leaves the first blocks (the tools) out of both counts."""
    shares = []
    for i in range(1, len(blocks)):
        previous = blocks[i - 1][skip : saved[i - 1]]
        current = blocks[i][skip:]
        common = 0
        for a, b in zip(previous, current, strict=False):
            if a != b:
                break
            common += len(a)
        shares.append(common / sum(len(b) for b in current))
    return shares


def mcp_like_tools() -> list[Tool]:
    """Tools shaped like a notes and a tracker MCP server's (schemas of a realistic size)."""

    async def unused(input: object, ctx: ToolContext) -> str:
        return "unused"

    tools = []
    for i in range(EXTRA_TOOLS):
        server = "notes" if i % 2 else "tracker"
        properties: dict[str, dict[str, object]] = {
            f"field_{j}": {
                "type": "string",
                "description": f"Field {j} of the {server} record; free text, at most 2,000 "
                "characters, markdown allowed.",
            }
            for j in range(6)
        }
        properties["limit"] = {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
        tools.append(
            Tool(
                name=f"{server}__operation_{i}",
                description=f"Operation {i} on the {server} workspace: reads or changes records "
                "the signed-in user can see. Returns the affected records as JSON.",
                do=unused,
                json_schema={"type": "object", "properties": properties, "required": ["field_0"]},
            )
        )
    return tools


def make_tools(state: LiveState) -> list[Tool]:
    @tool
    async def check_build(build: int, ctx: ToolContext) -> str:
        """Check the status of a CI build.

        Args:
            build: the build number.
        """
        if state.request in EVENTS_AT and ctx.call_id.endswith("-0"):
            await ctx.glove.emit_event(
                id=f"evt-{state.request}",
                source="webhook:ci",
                kind="build.finished",
                content=f"Build {build + 1} finished: green.",
            )
        return f"Build {build}: passed 1,204 tests in 14m. Artifacts uploaded. " * 4

    @tool
    def read_changelog(version: str) -> str:
        """Read the changelog of a version.

        Args:
            version: e.g. "2.4.0".
        """
        return f"Changelog {version}: fixed login redirect; faster search; new export. " * 5

    return [check_build, read_changelog]


def scripted_replies() -> list[str | list[ToolCall]]:
    replies: list[str | list[ToolCall]] = []
    for r in range(REQUESTS):
        replies.append([ToolCall(id=f"r{r}-0", name="check_build", input={"build": 800 + r})])
        replies.append(
            [ToolCall(id=f"r{r}-1", name="read_changelog", input={"version": f"2.{r}.0"})]
        )
        replies.append(f"Release 2.{r}.0 looks healthy: build {800 + r} passed.")
    return replies


def recording(
    state: LiveState, reply: str | list[ToolCall]
) -> Callable[[ModelRequest], str | list[ToolCall]]:
    def respond(request: ModelRequest) -> str | list[ToolCall]:
        blocks, saved = serialise(request)
        state.blocks.append(blocks)
        state.saved.append(saved)
        state.call += 1
        return reply

    return respond


async def run(naive: bool) -> tuple[list[float], list[float]]:
    state = LiveState()
    model = ScriptedModel([recording(state, r) for r in scripted_replies()])

    def iteration_state(signal: AbortSignal) -> str:
        return f"Dashboard at call {state.call}: 3 deploys running, queue depth {state.call % 7}."

    def request_state(signal: AbortSignal) -> str:
        return f"Signed-in user: dana (request {state.request}, plan: team)."

    def plan_state(signal: AbortSignal) -> str:
        return f"Release plan v{state.plan_version}: freeze Friday, ship Monday."

    glove = Glove(model=model, system_prompt=SYSTEM)
    for t in make_tools(state):
        glove.fold(t)
    for extra in mcp_like_tools():
        glove.fold(extra)
    glove.build()
    if naive:
        # The naive design: live state rewritten into the system prompt before every call.
        def rerender(signal: AbortSignal) -> None:
            glove.system_prompt = "\n".join(
                [SYSTEM, plan_state(signal), request_state(signal), iteration_state(signal)]
            )
            return None

        glove.add_context_provider(rerender)
    else:
        glove.add_context_provider(iteration_state)
        glove.add_context_provider(request_state, delivery="request")
        glove.add_context_provider(plan_state, delivery="history", key="plan")
    for r in range(REQUESTS):
        state.request = r
        if r in HISTORY_CHANGES_AT:
            state.plan_version += 1
        await glove.process_request(f"How is release 2.{r}.0 doing?")
    await glove.aclose()
    assert state.call == REQUESTS * CALLS_PER_REQUEST, state.call
    tool_blocks = len(glove.tools)
    return (
        prefix_share(state.blocks, state.saved),
        prefix_share(state.blocks, state.saved, skip=tool_blocks),
    )


def main() -> int:
    ours, ours_after_tools = asyncio.run(run(naive=False))
    naive, naive_after_tools = asyncio.run(run(naive=True))
    print("share of each call's bytes that repeat the previous call's saved prefix")
    print(f"{'':>4}  {'whole request':^29}  {'system + messages only':^29}")
    print(f"{'call':>4}  {'runtime ctx':>13} {'naive':>15}  {'runtime ctx':>13} {'naive':>15}")
    rows = zip(ours, naive, ours_after_tools, naive_after_tools, strict=True)
    for i, (a, b, c, d) in enumerate(rows, start=2):
        print(f"{i:>4}  {a:>13.1%} {b:>15.1%}  {c:>13.1%} {d:>15.1%}")
    means = [statistics.mean(x) for x in (ours, naive, ours_after_tools, naive_after_tools)]
    print(f"{'mean':>4}  {means[0]:>13.1%} {means[1]:>15.1%}  {means[2]:>13.1%} {means[3]:>15.1%}")
    verdict = "meets" if means[0] >= 0.95 else "misses"
    print(
        f"summary: runtime context keeps {means[0]:.1%} of each request a cached prefix vs "
        f"{means[1]:.1%} with live state in the system prompt (naive keeps only the tools, "
        f"which precede the system prompt; after the tools: {means[2]:.1%} vs {means[3]:.1%}); "
        f"{verdict} the >= 95% target over {len(ours) + 1} calls"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
