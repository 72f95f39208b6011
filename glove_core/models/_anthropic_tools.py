"""Tool definitions and tool references for the Messages API: deferred tools and what loads them.

A tool that joined mid-conversation (``ModelRequest.deferred_tools``) is declared with
``defer_loading: true``: the API keeps it out of the cached prefix (tools → system →
messages) and loads its definition where a ``tool_reference`` block in a ``tool_result`` names
it. Deferred tools go after the ordinary ones and the tools breakpoint sits on the last ordinary
tool, so the cached tool prefix is byte-identical before and after an activation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

from glove_core.models.base import ModelRequest
from glove_core.tools import ToolSpec
from glove_core.types import ToolResultData

__all__ = ["ReferenceBlocks", "effective_deferred", "reference_blocks", "tool_blocks"]

logger = logging.getLogger(__name__)

Block = dict[str, Any]
ReferenceBlocks = Callable[[ToolResultData], list[Block]]
"""The blocks a tool result adds for the tools it references."""


def effective_deferred(request: ModelRequest) -> frozenset[str]:
    """The tools to declare deferred: the request's, unless that would be every tool (the API
    answers 400 "All tools have defer_loading set. At least one tool must be non-deferred")."""
    deferred = request.deferred_tools
    if deferred and len(deferred) >= len(request.tools):
        logger.info(
            "every tool of the request would be deferred, which the API refuses; "
            "declaring them ordinary"
        )
        return frozenset()
    return deferred


def _tool_block(spec: ToolSpec) -> Block:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def tool_blocks(request: ModelRequest, deferred: Collection[str]) -> tuple[list[Block], int]:
    """The ``tools`` array (ordinary tools in order, then the deferred ones) and how many are
    ordinary."""
    ordinary = [_tool_block(s) for s in request.tools if s.name not in deferred]
    later = [{**_tool_block(s), "defer_loading": True} for s in request.tools if s.name in deferred]
    return ordinary + later, len(ordinary)


def reference_blocks(deferred: Collection[str]) -> ReferenceBlocks:
    """For each tool a result references, a ``tool_reference`` block when the tool is deferred
    in this request. Nothing for any other: an ordinary tool is loaded already, and the API
    refuses a reference to a tool it has no deferred definition of ("Tool reference 'x' has no
    corresponding tool definition"); the loop reports references to tools nobody offers."""

    def blocks(result: ToolResultData) -> list[Block]:
        names = dict.fromkeys(result.tool_references or ())
        return [{"type": "tool_reference", "tool_name": n} for n in names if n in deferred]

    return blocks
