"""Tool-name learning: a mount keeps each server's listed tools with the adapter, when the
adapter can (``LearnedToolsStore``), so discovery finds the server by what its tools do in
later conversations; and, when it can keep them too (``LearnedListingsStore``), the server's
instructions and the listing's TTL. Learning is best effort: a failure is logged, never an
activation's."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from glove_core import Tool
from glove_mcp.adapter import (
    MAX_LEARNED_DESCRIPTION,
    LearnedListingsStore,
    LearnedTool,
    LearnedToolsStore,
    McpAdapter,
)
from glove_mcp.mount.bridge import description_text

__all__ = ["remember_tools"]

logger = logging.getLogger(__name__)


def _summary(description: str) -> str:
    # The server's words without the untrusted envelope, first paragraph only: bridged
    # descriptions may append the result's shape after it.
    text = description_text(description)
    return text.strip().split("\n\n", 1)[0][:MAX_LEARNED_DESCRIPTION]


async def remember_tools(
    adapter: McpAdapter,
    server_id: str,
    bridged: Sequence[tuple[Tool, str]],
    *,
    instructions: str | None = None,
    ttl_ms: int | None = None,
) -> None:
    """Save the tools ``server_id`` offers now (bridged tool, real name) with ``adapter``, if
    it is a ``LearnedToolsStore``, with the server's ``instructions`` and the listing's
    ``ttl_ms`` if it is a ``LearnedListingsStore``; otherwise do nothing."""
    if not isinstance(adapter, LearnedToolsStore):
        return
    try:
        # Inside the try: a server may list a tool LearnedTool refuses (an empty name).
        tools = [LearnedTool(real, _summary(tool.description or "")) for tool, real in bridged]
        if isinstance(adapter, LearnedListingsStore):
            await adapter.save_learned_listing(
                server_id, tools, instructions=instructions, ttl_ms=ttl_ms
            )
        else:
            await adapter.save_learned_tools(server_id, tools)
    except Exception as exc:
        logger.warning("could not keep the tools of %r for discovery: %s", server_id, exc)
