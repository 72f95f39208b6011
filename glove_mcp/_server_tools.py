"""One server's tools as a mount offers them: bridged from a listing, and compared with what
was offered before when the server says its tools changed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from glove_core import Tool
from glove_mcp.bridge import READ_RESOURCE_TOOL, bridge_mcp_tool, resource_reader
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import McpServerConnection
from glove_mcp.errors import McpActivationError

__all__ = ["LoadedServer", "ToolChange", "bridge_server", "relisted"]

logger = logging.getLogger(__name__)


@dataclass
class LoadedServer:
    """A server whose tools a mount offers now."""

    connection: McpServerConnection
    tools: dict[str, str]
    """Bridged name → the server's real tool name."""
    replaced: dict[str, Tool] = field(default_factory=dict)
    """Tools of an earlier activation (switched off) that these took the places of."""


async def bridge_server(
    entry: McpCatalogueEntry,
    conn: McpServerConnection,
    server_mode: bool,
    wrap_tool: Callable[[Tool, McpCatalogueEntry], Tool] | None,
) -> list[tuple[Tool, str]]:
    """List the server's tools and bridge each: (tool, the server's real tool name).

    Raises:
        McpActivationError: two tools would have the same bridged name.
    """
    bridged: list[tuple[Tool, str]] = []
    for mcp_tool in await conn.list_tools():
        tool = bridge_mcp_tool(conn, mcp_tool, server_mode)
        if wrap_tool is not None:
            tool = wrap_tool(tool, entry)
        bridged.append((tool, mcp_tool.name))
    # A server that declares resources also gets the tool that reads them (resource links
    # in results name it).
    reader = resource_reader(conn, [real for _, real in bridged])
    if reader is not None:
        bridged.append((wrap_tool(reader, entry) if wrap_tool else reader, READ_RESOURCE_TOOL))
    names = [t.name for t, _ in bridged]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise McpActivationError(
            entry.id, f"the server lists duplicate tool names: {', '.join(dupes)}"
        )
    return bridged


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


def relisted(
    server: str,
    before: dict[str, Tool],
    bridged: list[tuple[Tool, str]],
    taken: set[str],
) -> ToolChange:
    """Compare a new listing (``bridged``) with the tools offered ``before``; a new tool whose
    name another tool already has (``taken``) is not offered, and logged."""
    clashes = sorted(t.name for t, _ in bridged if t.name in taken)
    if clashes:
        logger.warning(
            "MCP server %r added tools whose names another tool has; not offered: %s",
            server,
            ", ".join(clashes),
        )
    offered = {t.name: t for t, _ in bridged if t.name not in taken}
    return ToolChange(
        added=tuple(n for n in offered if n not in before),
        removed=tuple(n for n in before if n not in offered),
        changed=tuple(n for n in offered if n in before and before[n].spec != offered[n].spec),
        offered=offered,
        names={t.name: real for t, real in bridged if t.name in offered},
    )
