"""Tools held past a server's ``max_tools``: found by name and words, loaded on request.

A server that lists more tools than ``ListingLimits.max_tools`` mounts with its first
``max_tools``; the rest (up to ``max_held_tools``) are bridged but held. The server then gets
one more tool, ``<id>__more_tools``: with a query it ranks the held tools as discovery ranks a
catalogue (BM25F over their names, camelCase split, and descriptions); with names it loads
them. A loaded tool joins the conversation like a tool of a server activated mid-conversation:
the result references it, so it is declared deferred, outside the cached prompt prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from glove_core import Tool, ToolContext, ToolResultData
from glove_mcp.discovery import CatalogueIndex
from glove_mcp.mount.bridge import bridged_tool_name, description_text
from glove_mcp.mount.listing import MORE_TOOLS

__all__ = ["HeldTools", "held_tools_finder"]

_FOUND_AT_MOST = 20
_LISTED_AT_MOST = 200
_SUMMARY_CHARS = 200

HeldTools = Mapping[str, tuple[Tool, str]]
"""Held tools of one server: bridged name → (bridged tool, the server's real name)."""


class MoreToolsInput(BaseModel):
    """Input of ``<id>__more_tools``."""

    query: str | None = Field(
        default=None,
        description="A few words of what the tool does or of its name; lists the held-back "
        "tools that match best. Leave out (with no load) to list them all.",
    )
    load: list[str] | None = Field(
        default=None,
        description="Names of held-back tools to load, as listed; they can be called from "
        "your next step.",
    )


@dataclass(frozen=True)
class _Item:
    """A held tool as discovery's index reads a catalogue entry."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...] = ()


def _summary(tool: Tool) -> str:
    text = description_text(tool.description).strip().split("\n\n", 1)[0]
    return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"


def _rows(held: HeldTools, names: Sequence[str]) -> list[dict[str, str]]:
    return [{"name": name, "description": _summary(held[name][0])} for name in names]


def held_tools_finder(
    server: str,
    held: Callable[[], HeldTools],
    load: Callable[[Sequence[str]], list[str]],
    *,
    name: str = MORE_TOOLS,
) -> Tool:
    """The ``<server>__more_tools`` tool.

    Args:
        server: the catalogue id.
        held: the server's held tools now (loading takes tools out).
        load: loads the given bridged names (all held) and returns them.
        name: its name after the namespace (``BoundedListing.finder_name``).
    """
    name = bridged_tool_name(server, name)

    def find(input: MoreToolsInput, ctx: ToolContext) -> ToolResultData:
        now = held()
        if input.load:
            by_real = {real: bridged for bridged, (_, real) in now.items()}
            wanted = list(dict.fromkeys(by_real.get(n, n) for n in input.load))
            unknown = [n for n in wanted if n not in now]
            if unknown:
                return ToolResultData(
                    status="error",
                    message=f"not held back by MCP server {server!r}: {', '.join(unknown)} "
                    f"(already loaded, or no such tool); call {name} with a query to find "
                    "the right names",
                )
            loaded = load(wanted)
            return ToolResultData(
                data=f"Loaded from MCP server {server!r}: {', '.join(loaded)}. They can be "
                "called from your next step.",
                tool_references=loaded,
            )
        if not now:
            return ToolResultData(data=f"MCP server {server!r} holds back no more tools.")
        if not input.query or not input.query.strip():
            names = list(now)[:_LISTED_AT_MOST]
        else:
            items = [_Item(n, real, _summary(tool)) for n, (tool, real) in now.items()]
            index = CatalogueIndex(items, ranker=None)
            names = [item.id for item in index.search(input.query, limit=_FOUND_AT_MOST)]
            if not names:
                return ToolResultData(
                    data=f"no held-back tool of MCP server {server!r} matches; try other "
                    "words, or no query to list them all"
                )
        return ToolResultData(
            data={"held_back": len(now), "tools": _rows(now, names)},
        )

    return Tool(
        name=name,
        description=(
            f"MCP server {server!r} has more tools than are offered. Search the held-back "
            f'ones with {{"query": "a few words"}}, then load those you need with '
            f'{{"load": [names]}}; loaded tools can be called from your next step.'
        ),
        do=find,
        input_model=MoreToolsInput,
        parallel_safe=False,
    )
