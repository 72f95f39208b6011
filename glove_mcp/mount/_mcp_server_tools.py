"""One server's tools as a mount offers them: bridged from a listing within the mount's
``ListingLimits``, and compared with what was offered before when the server says its tools
changed."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from glove_core import Glove, Tool
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import McpServerConnection
from glove_mcp.errors import McpActivationError
from glove_mcp.extensions.apps import UI_EXTENSION
from glove_mcp.extensions.skills import McpSkill
from glove_mcp.mount.apps import ServerViews
from glove_mcp.mount.bridge import (
    READ_RESOURCE_TOOL,
    bridge_mcp_tool,
    bridged_tool_name,
    resource_reader,
    serves_resources,
    untrusted_output,
)
from glove_mcp.mount.listing import bound_listing, listing_read_limit
from glove_mcp.mount.options import MountOptions
from glove_mcp.mount.skills import USE_SKILL_TOOL, SkillsInUse, server_skills, skill_tool
from glove_mcp.subscribers import McpEvent, McpListingLimited
from glove_mcp.types import McpTool

__all__ = ["BridgedServer", "LoadedServer", "ToolChange", "bridge_server", "relisted"]

logger = logging.getLogger(__name__)


@dataclass
class LoadedServer:
    """A server whose tools a mount offers now."""

    connection: McpServerConnection
    tools: dict[str, str]
    """Bridged name → the server's real tool name."""
    replaced: dict[str, Tool] = field(default_factory=dict)
    """Tools of an earlier activation (switched off) that these took the places of."""
    note: str | None = None
    """What the listing limits left out, for the model (None when nothing)."""
    skills: list[McpSkill] = field(default_factory=list)
    """The skills it listed when loaded."""
    app_tools: dict[str, Tool] = field(default_factory=dict)
    """Its tools for its views alone (MCP Apps visibility ``["app"]``), by bridged name."""
    held: dict[str, tuple[Tool, str]] = field(default_factory=dict)
    """Tools past ``max_tools`` not loaded yet: bridged name → (tool, real name)."""

    def load_held(self, names: Sequence[str], offered: dict[str, Tool]) -> list[str]:
        """Move the held tools ``names`` (bridged names, all held) into ``offered`` and
        ``tools``; returns them."""
        for name in names:
            tool, real = self.held.pop(name)
            offered[name] = tool
            self.tools[name] = real
        return list(names)

    def take_back(self, offered: dict[str, Tool]) -> None:
        """Take these tools back out of the mount's ``offered`` tools, restoring those they
        replaced (all or nothing: an activation that failed after its tools were offered)."""
        for name in self.tools:
            previous = self.replaced.get(name)
            if previous is not None:
                offered[name] = previous
            else:
                offered.pop(name, None)


@dataclass(frozen=True)
class BridgedServer:
    """What ``bridge_server`` made of a server.

    Attributes:
        tools: (tool, the server's real tool name) for each tool to offer the model.
        note: what the listing limits left out (None when nothing).
        skills: the skills it lists.
        app_tools: tools for its views alone, by bridged name (empty without apps).
        held: tools past ``max_tools``, bridged but not offered: bridged name → (tool, real
            name).
    """

    tools: list[tuple[Tool, str]]
    note: str | None
    skills: list[McpSkill]
    app_tools: dict[str, Tool]
    held: dict[str, tuple[Tool, str]]


async def bridge_server(
    entry: McpCatalogueEntry,
    conn: McpServerConnection,
    glove: Glove,
    options: MountOptions,
    publish: Callable[[McpEvent], Awaitable[None]],
    *,
    skills_in_use: SkillsInUse | None = None,
    finder: Callable[[str], Tool] | None = None,
) -> BridgedServer:
    """List the server's tools within ``options.listing_limits`` and bridge each, with the
    mount's result bounds (``options.max_result_chars``, the Glove's ``result_limits``),
    marked untrusted when ``options.mark_untrusted``, then through ``options.wrap_tool``.

    A listing over a bound is logged and published (``McpListingLimited``) here, and still
    bridged with what fits.

    Skills (when the server lists some, and lists no tool named ``use_skill``) add
    ``<id>__use_skill`` (``glove_mcp.mount.skills``). With ``options.apps`` and a server that
    declares MCP Apps, results carry their views (``glove_mcp.mount.apps``) and tools for views
    alone are bridged apart (``app_tools``); without, those are left out.

    Tools past ``max_tools`` are bridged and held; when there are any, ``finder(name)`` (the
    ``<id>__more_tools`` tool) is offered with the others.

    Raises:
        McpActivationError: two tools would have the same bridged name.
    """
    limits = options.listing_limits
    listed_tools = await conn.list_tools(limit=listing_read_limit(limits))
    listing = bound_listing(entry.id, listed_tools, limits)
    # Asked before the listing is published: a subscriber told of it may act at once, and
    # must find the bridged tools and the note as this call returns them.
    has_resources = await serves_resources(conn)
    note = listing.summary(entry.id)
    if note is not None:
        logger.warning("%s", note)
        await publish(
            McpListingLimited(
                entry.id,
                note,
                listing.big_schemas + listing.over_budget,
                listing.cut,
                listing.more_tools or bool(listing.held),
                tuple(bridged_tool_name(entry.id, t.name) for t in listing.held),
            )
        )
    chars, results = options.max_result_chars, glove.result_limits

    def wrap(tool: Tool) -> Tool:
        if options.mark_untrusted:
            tool = untrusted_output(tool, entry)
        return options.wrap_tool(tool, entry) if options.wrap_tool is not None else tool

    # A server with resources to read also gets the tool that reads them (resource links
    # in results name it, so it is decided first).
    # Every name the server uses, offered or held: a tool of the mount's own (the resource
    # reader, the skill loader) is left out where the server has a tool of that name.
    listed = [mcp_tool.name for mcp_tool in (*listing.tools, *listing.held)]
    reader = (
        resource_reader(conn, listed, max_result_chars=chars, limits=results)
        if has_resources
        else None
    )
    views = ServerViews(conn) if options.apps and conn.declares_extension(UI_EXTENSION) else None
    if views is not None:
        views.app_tools = {
            t.name: bridged_tool_name(conn.namespace, t.name) for t in listing.tools if t.for_app
        }

    def bridge(mcp_tool: McpTool) -> tuple[Tool, str]:
        tool = bridge_mcp_tool(
            conn,
            mcp_tool,
            glove.server_mode,
            max_result_chars=chars,
            limits=results,
            resource_reader=reader.name if reader is not None else None,
            views=views,
        )
        return wrap(tool), mcp_tool.name

    bridged: list[tuple[Tool, str]] = []
    app_tools: dict[str, Tool] = {}
    for mcp_tool in listing.tools:
        if not mcp_tool.for_model and views is None:
            continue  # for a view this host never shows
        tool, real = bridge(mcp_tool)
        if mcp_tool.for_model:
            bridged.append((tool, real))
        else:
            app_tools[tool.name] = tool
    held = [bridge(mcp_tool) for mcp_tool in listing.held if mcp_tool.for_model]
    if reader is not None:
        bridged.append((wrap(reader), READ_RESOURCE_TOOL))
    skills = await server_skills(conn)
    if skills and skills_in_use is not None and USE_SKILL_TOOL not in listed:
        loader = skill_tool(conn, skills, skills_in_use, reader=reader is not None)
        bridged.append((wrap(loader), USE_SKILL_TOOL))
    if held and finder is not None:
        # Named so that it clashes with none of the server's own tools, offered or held.
        found_by = listing.finder_name
        bridged.append((wrap(finder(found_by)), found_by))
    names = [t.name for t, _ in (*bridged, *held)]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise McpActivationError(
            entry.id, f"the server lists duplicate tool names: {', '.join(dupes)}"
        )
    return BridgedServer(bridged, note, skills, app_tools, {t.name: (t, real) for t, real in held})


@dataclass(frozen=True)
class ToolChange:
    """What a new listing changes.

    Attributes:
        added, removed, changed: bridged names that appeared, went away, or got a new
            description or input schema.
        offered: every tool to offer now, by bridged name.
        names: bridged name → the server's real name, for those offered.
    """

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    offered: dict[str, Tool]
    names: dict[str, str]

    @property
    def names_changed(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """``(added, removed, changed)``."""
        return self.added, self.removed, self.changed


def relisted(
    server: str,
    tools: dict[str, Tool],
    loaded: LoadedServer,
    bridged: list[tuple[Tool, str]],
    taken: set[str],
) -> ToolChange:
    """Apply a new listing (``bridged``) of ``loaded``'s server to the mount's ``tools`` (by
    bridged name) and to ``loaded.tools``, and say what changed. A new tool whose name
    another tool already has (``taken``) is not offered, and logged."""
    before = {n: tools[n] for n in loaded.tools if n in tools}
    clashes = sorted(t.name for t, _ in bridged if t.name in taken)
    if clashes:
        logger.warning(
            "MCP server %r added tools whose names another tool has; not offered: %s",
            server,
            ", ".join(clashes),
        )
    offered = {t.name: t for t, _ in bridged if t.name not in taken}
    change = ToolChange(
        added=tuple(n for n in offered if n not in before),
        removed=tuple(n for n in before if n not in offered),
        changed=tuple(n for n in offered if n in before and before[n].spec != offered[n].spec),
        offered=offered,
        names={t.name: real for t, real in bridged if t.name in offered},
    )
    for name in change.removed:
        tools.pop(name, None)
    for name in (*change.added, *change.changed):
        tools[name] = change.offered[name]
    loaded.tools = change.names
    return change
