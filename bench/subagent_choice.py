"""End to end: does the discovery subagent, on a real model, activate the right server?

Run (needs ``ANTHROPIC_API_KEY``; without it the harness says so and exits 0)::

    python bench/subagent_choice.py [--needs PATH] [--limit N] [--model NAME] [--budget TOKENS]

For each need, the main agent (a scripted model, so its own judgement is not measured) calls
``find_capability`` with the need's words; the ``find_capability`` subagent runs on the real
model with the mount's real prompt and tools (``list_capabilities``, ``activate``,
``deactivate``), policy ``auto-pick-best``. The catalogue is the realistic one
(``bench/data/realistic``, 282 servers) with the tools of its 41 servers known ahead, as
``glove-mcp servers index`` leaves them; every entry's URL is one local MCP test server, so an
activation really connects and nothing leaves the machine but the model's calls. A need counts
as right when a server the subagent activated is in its ``accept`` list. Printed: the share of
needs right, of needs where something wrong was activated, and of needs where nothing was,
overall and by ``kind``; never the needs themselves.

``--budget`` sets the subagent's catalogue budget in tokens (default: the mount's 12,000, which
the whole realistic catalogue fits; a small budget measures the shortlist the prompt gives
instead). The default needs are the held-out tools set of ``bench/data/registry-blind``: each
run spends model calls on up to ``--limit`` of them (default 40), in file order.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glove_core import Glove, ModelAdapter, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.adapter import LearnedTool
from glove_mcp.discovery import DEFAULT_CATALOGUE_BUDGET, FIND_CAPABILITY
from glove_mcp.testing import serve

__all__ = ["Choice", "Need", "choose", "main"]

DATA = Path(__file__).parent / "data"
NEEDS = DATA / "registry-blind" / "tools" / "queries.jsonl"
REALISTIC = DATA / "realistic"
DEFAULT_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Need:
    """One need with the ids that satisfy it."""

    text: str
    accept: frozenset[str]
    kind: str = "all"


@dataclass
class Choice:
    """Tallies of the subagent's activations, per kind."""

    right: dict[str, int] = field(default_factory=dict)
    wrong: dict[str, int] = field(default_factory=dict)
    none: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, activated: Sequence[str], accept: frozenset[str]) -> None:
        for group in ("all", kind):
            self.counts[group] = self.counts.get(group, 0) + 1
            tally = (
                self.none
                if not activated
                else self.right
                if accept & set(activated)
                else self.wrong
            )
            tally[group] = tally.get(group, 0) + 1

    def share(self, group: str = "all") -> float:
        """The share of needs where an activated server was right."""
        return self.right.get(group, 0) / self.counts[group] if self.counts.get(group) else 0.0

    def lines(self) -> list[str]:
        out = [f"{'kind':<10} {'n':>4}  {'right':>6}  {'wrong':>6}  {'none':>6}"]
        for group in ["all", *sorted(g for g in self.counts if g != "all")]:
            n = self.counts[group]
            out.append(
                f"{group:<10} {n:>4}  {self.right.get(group, 0) / n:6.3f}  "
                f"{self.wrong.get(group, 0) / n:6.3f}  {self.none.get(group, 0) / n:6.3f}"
            )
        return out


def load_needs(path: Path, limit: int | None = None) -> list[Need]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            out.append(
                Need(item["query"], frozenset(item["accept"]), str(item.get("kind") or "all"))
            )
    return out[:limit] if limit is not None else out


def load_catalogue(
    folder: Path, url: str
) -> tuple[list[McpCatalogueEntry], dict[str, list[LearnedTool]]]:
    """The realistic catalogue, every entry pointed at ``url``, and its known tools."""
    entries = [
        McpCatalogueEntry(
            id=item["id"],
            name=item["name"],
            description=item["description"],
            tags=item.get("tags") or [],
            url=url,
        )
        for item in json.loads((folder / "catalogue.json").read_text(encoding="utf-8"))
    ]
    raw = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    tools = {
        id: [LearnedTool(t["name"], t.get("description") or "") for t in listed]
        for id, listed in raw.items()
    }
    return entries, tools


async def choose(
    need: str,
    entries: Sequence[McpCatalogueEntry],
    tools: dict[str, list[LearnedTool]],
    subagent: ModelAdapter,
    budget: int = DEFAULT_CATALOGUE_BUDGET,
) -> list[str]:
    """The ids the discovery subagent activates for ``need`` (a fresh conversation)."""
    main_model = ScriptedModel(
        [[ToolCall(id="need", name=FIND_CAPABILITY, input={"need": need})], "done"]
    )
    glove = Glove(model=main_model, system_prompt="You are a helpful agent.", server_mode=True)
    adapter = MemoryMcpAdapter("choice")
    for id, known in tools.items():
        await adapter.save_learned_tools(id, known)
    async with await mount_mcp(
        glove,
        adapter,
        entries,
        ambiguity_policy="auto-pick-best",
        subagent_model=subagent,
        discovery_budget_tokens=budget,
    ) as mount:
        glove.build()
        await glove.process_request(need)
        return list(mount.loaded)


async def run(args: argparse.Namespace, subagent: ModelAdapter) -> Choice:
    needs = load_needs(args.needs, args.limit)
    choice = Choice()
    async with serve("notes") as url:
        entries, tools = load_catalogue(args.realistic, url)
        for number, need in enumerate(needs, start=1):
            try:
                activated = await choose(need.text, entries, tools, subagent, args.budget)
            except Exception as exc:  # one failed call is a need not met, not the end
                print(f"need {number}: {type(exc).__name__}: {exc}", file=sys.stderr)
                activated = []
            choice.add(need.kind, activated, need.accept)
    return choice


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--needs", type=Path, default=NEEDS)
    parser.add_argument("--realistic", type=Path, default=REALISTIC)
    parser.add_argument("--limit", type=int, default=40, help="at most this many needs")
    parser.add_argument("--model", default=os.environ.get("GLOVE_MODEL", DEFAULT_MODEL))
    parser.add_argument("--budget", type=int, default=DEFAULT_CATALOGUE_BUDGET)
    args = parser.parse_args(argv)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        print("skipped: ANTHROPIC_API_KEY is not set (this harness calls a real model)")
        return 0
    from glove_core import AnthropicModel

    subagent: Any = AnthropicModel(args.model, api_key=key)
    choice = asyncio.run(run(args, subagent))
    print(f"subagent on {args.model}, catalogue budget {args.budget} tokens")
    print("\n".join(choice.lines()))
    print(f"share of needs where the activated server is right: {choice.share():.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
