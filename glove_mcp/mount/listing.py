"""How much of one server's tool listing a mount offers.

Every offered tool's name, description and input schema go to the model with every call, so a
server that lists ten thousand tools, or one schema of megabytes, would be paid for on every
turn. ``ListingLimits`` bounds the count and the size per server. A listing over a bound fails
open: the server still mounts with what fits (its first tools, in the server's order), and the
mount says what it left out, naming the bound: a warning in the log, an ``McpListingLimited``
event for subscribers, and a note the model reads with the servers' instructions.

Tools past ``max_tools`` are not lost: up to ``max_held_tools`` more are read and *held*, not
offered but kept bridged, and the server gets one more tool, ``<id>__more_tools``, that searches
them by name and words and loads the ones the model asks for (they join the conversation as
deferred tools, outside the cached prompt prefix). The note names the held tools and that tool.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from glove_mcp.mount.bridge import bridged_description, bridged_tool_name, tool_summary
from glove_mcp.types import McpTool

__all__ = [
    "DEFAULT_LISTING_LIMITS",
    "MORE_TOOLS",
    "BoundedListing",
    "ListingLimits",
    "bound_listing",
    "listing_read_limit",
]

_RANGES = {
    "max_tools": (1, 10_000),
    "max_held_tools": (0, 10_000),
    "max_description_chars": (100, 1_000_000),
    "max_schema_bytes": (100, 10_000_000),
    "max_listing_bytes": (1_000, 100_000_000),
}
_NAMES_SHOWN = 10
_HELD_NAMES_SHOWN = 100
"""Held tools named in the note (the model finds the others with the search tool)."""
MORE_TOOLS = "more_tools"
"""The held-tool search tool's name after the namespace: ``linear__more_tools``."""


@dataclass(frozen=True)
class ListingLimits:
    """Bounds on what one server's ``tools/list`` may put in front of the model
    (``mount_mcp(listing_limits=...)``); the same bounds apply when the server's tools change.

    Raises:
        ValueError: a field is not an int within its range (the message names both).
    """

    max_tools: int = 128
    """The most tools offered per server (default 128, OpenAI's limit for one request; 1 to
    10,000). The first ``max_tools`` (in the server's order, after ``exclude_tools`` and
    ``filter_tools``) are offered; those after them are held (``max_held_tools``)."""
    max_held_tools: int = 1_000
    """The most tools past ``max_tools`` kept reachable per server (default 1,000; 0 to
    10,000): not offered, but found and loaded on request through ``<id>__more_tools``. Pages
    stop being read once ``max_tools + max_held_tools`` tools and one more have passed the
    filters, so a listing that never ends costs a bounded number of pages."""
    max_description_chars: int = 10_000
    """A tool description longer than this many characters is cut, with a note saying so
    (default 10,000; 100 to 1,000,000)."""
    max_schema_bytes: int = 64_000
    """A tool whose input schema takes more than this many bytes (as JSON, UTF-8) is not
    offered (default 64,000; 100 to 10,000,000)."""
    max_listing_bytes: int = 400_000
    """The most bytes of tool definitions offered per server (name, description and input
    schema, as JSON, UTF-8; default 400,000, about 100,000 tokens; 1,000 to 100,000,000).
    A tool that would take the total past it is not offered."""

    def __post_init__(self) -> None:
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(
                    f"ListingLimits.{name} must be an int from {low:,} to {high:,}, got {value!r}"
                )


DEFAULT_LISTING_LIMITS = ListingLimits()
"""The bounds a mount applies unless told otherwise."""


@dataclass(frozen=True)
class BoundedListing:
    """What of a listing is offered, and what was left out (bridged names).

    Attributes:
        tools: the tools to offer, in the server's order, descriptions cut to the bound.
        more_tools: the server listed more than ``max_tools + max_held_tools`` tools (the
            rest were not read).
        big_schemas: tools not offered: their input schemas are over ``max_schema_bytes``.
        over_budget: tools not offered: ``max_listing_bytes`` was reached before them.
        cut: tools whose descriptions were cut to ``max_description_chars``.
        held: tools past ``max_tools``, in the server's order: not offered, loadable on
            request (descriptions cut to the bound like the others').
    """

    tools: list[McpTool]
    more_tools: bool = False
    big_schemas: tuple[str, ...] = ()
    over_budget: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()
    limits: ListingLimits = field(default=DEFAULT_LISTING_LIMITS, repr=False)
    held: list[McpTool] = field(default_factory=list)

    @property
    def limited(self) -> bool:
        """Whether any bound was reached."""
        return bool(
            self.more_tools or self.big_schemas or self.over_budget or self.cut or self.held
        )

    @property
    def finder_name(self) -> str:
        """The held-tool search tool's name after the namespace: ``more_tools``, or
        ``more_tools_2`` (and so on) when the server has a tool of that name itself."""
        taken = {t.name for t in self.tools} | {t.name for t in self.held}
        name, number = MORE_TOOLS, 1
        while name in taken:
            number += 1
            name = f"{MORE_TOOLS}_{number}"
        return name

    def summary(self, server: str) -> str | None:
        """What was left out, in a few sentences that name each bound (None when nothing)."""
        if not self.limited:
            return None
        limits = self.limits
        parts = []
        if self.held or self.more_tools:
            parts.append(f"lists more than {limits.max_tools:,} tools (max_tools)")
        if self.held:
            names = [bridged_tool_name(server, t.name) for t in self.held]
            finder = bridged_tool_name(server, self.finder_name)
            parts.append(
                f"{_count(names, 'tool')} past that bound are held back, not offered: "
                f"{_names(names, _HELD_NAMES_SHOWN)}. To use one, call {finder} with "
                f'{{"query": "a few words"}} to search them by name and description, then '
                f'with {{"load": [names]}} to load them; loaded tools can be called from your '
                f"next step"
            )
        if self.more_tools:
            read = limits.max_tools + limits.max_held_tools
            parts.append(
                f"more than {read:,} were listed (max_tools + max_held_tools): those after "
                f"the first {read:,} were not read"
            )
        if self.big_schemas:
            parts.append(
                f"{_count(self.big_schemas, 'tool')} not offered: input schema over "
                f"{limits.max_schema_bytes:,} bytes (max_schema_bytes): {_names(self.big_schemas)}"
            )
        if self.over_budget:
            parts.append(
                f"{_count(self.over_budget, 'tool')} not offered: its tool definitions reached "
                f"{limits.max_listing_bytes:,} bytes (max_listing_bytes): "
                f"{_names(self.over_budget)}"
            )
        if self.cut:
            parts.append(
                f"{_count(self.cut, 'description')} cut to {limits.max_description_chars:,} "
                f"characters (max_description_chars): {_names(self.cut)}"
            )
        offered = _count(self.tools, "tool")
        return f"MCP server {server!r} {'; '.join(parts)}. {offered} offered."


def _count(items: Sequence[object], noun: str) -> str:
    return f"{len(items):,} {noun}{'' if len(items) == 1 else 's'}"


def _names(names: Sequence[str], shown_at_most: int = _NAMES_SHOWN) -> str:
    shown = ", ".join(names[:shown_at_most])
    rest = len(names) - shown_at_most
    return f"{shown} and {rest:,} more" if rest > 0 else shown


def _json_bytes(value: Any) -> int | None:
    """The size of ``value`` as compact JSON in UTF-8, or None if it cannot be encoded."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, TypeError, RecursionError):
        return None
    return len(text.encode("utf-8"))


def _cut_description(tool: McpTool, limit: int) -> McpTool | None:
    """The tool with its description cut to ``limit`` characters, or None if it fits (the
    text measured is the one the bridge describes the tool with)."""
    text = tool_summary(tool)
    if len(text) <= limit:
        return None
    note = f"\n[… description cut: {len(text):,} characters, showing the first {limit:,}]"
    return tool.model_copy(update={"description": text[:limit] + note})


def bound_listing(server: str, listed: Sequence[McpTool], limits: ListingLimits) -> BoundedListing:
    """Apply ``limits`` to the tools server ``server`` listed (read with
    ``list_tools(limit=listing_read_limit(limits))``, so one more than the bound means
    "more")."""
    read = limits.max_tools + limits.max_held_tools
    more_tools = len(listed) > read
    offered: list[McpTool] = []
    big: list[str] = []
    over: list[str] = []
    cut: list[str] = []
    total = 0
    for tool in listed[: limits.max_tools]:
        name = bridged_tool_name(server, tool.name)
        schema = _json_bytes(tool.input_schema)
        if schema is None or schema > limits.max_schema_bytes:
            big.append(name)
            continue
        shortened = _cut_description(tool, limits.max_description_chars)
        if shortened is not None:
            tool = shortened
        # What the model receives for the tool: its name, description and input schema.
        size = len(name) + len(bridged_description(tool).encode("utf-8")) + schema
        if total + size > limits.max_listing_bytes:
            over.append(name)
            continue
        total += size
        if shortened is not None:
            cut.append(name)
        offered.append(tool)
    held: list[McpTool] = []
    for tool in listed[limits.max_tools : read]:
        # Held tools are not in front of the model until loaded: only the schema bound (what
        # one tool may cost once loaded) and the description cut apply.
        schema = _json_bytes(tool.input_schema)
        if schema is None or schema > limits.max_schema_bytes:
            big.append(bridged_tool_name(server, tool.name))
            continue
        held.append(_cut_description(tool, limits.max_description_chars) or tool)
    return BoundedListing(offered, more_tools, tuple(big), tuple(over), tuple(cut), limits, held)


def listing_read_limit(limits: ListingLimits) -> int:
    """How many tools to read of a listing under ``limits`` (one more than are kept, so that
    ``bound_listing`` can tell whether there were more)."""
    return limits.max_tools + limits.max_held_tools + 1
