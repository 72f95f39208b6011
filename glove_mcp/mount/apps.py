"""MCP Apps on a mount (``glove_mcp.extensions.apps``): the view a tool result is shown in, read and
kept per server, handed to the application in the result's ``render_data``.

For a server of a mount made with ``apps=True`` that declares the extension, every bridged
tool's ``render_data`` is a dict: ``content`` (the content blocks in MCP's JSON shape, what
it is without apps), ``structured_content`` and ``is_error`` — so a view that called the tool
gets MCP's ``CallToolResult`` back — and, for a tool with ``_meta.ui.resourceUri``, the view
under ``APP_KEY`` (``app_render_data``). A view that cannot be read (refused, another type,
too large) is logged and left out: the result is shown as text, as without apps.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from glove_core import ToolResultData
from glove_mcp.connect import McpServerConnection
from glove_mcp.errors import GloveMcpError
from glove_mcp.extensions.apps import APP_KEY, McpAppView, app_render_data
from glove_mcp.types import McpCallResult

__all__ = ["ServerViews", "with_result_fields", "with_view"]

logger = logging.getLogger(__name__)


@dataclass
class ServerViews:
    """One server's views, read once each while the server stays loaded, and the tools a
    view of it may call (the server's name → the bridged name)."""

    connection: McpServerConnection
    app_tools: dict[str, str] = field(default_factory=dict)
    _views: dict[str, McpAppView] = field(default_factory=dict)

    async def view(self, uri: str) -> McpAppView | None:
        """The view ``uri``, or None when it cannot be read (logged)."""
        known = self._views.get(uri)
        if known is not None:
            return known
        try:
            found = await self.connection.read_app_view(uri)
        except GloveMcpError as exc:
            logger.warning(
                "MCP server %r: the view %r cannot be shown: %s",
                self.connection.namespace,
                uri,
                exc,
            )
            return None
        self._views[uri] = found
        return found


def with_result_fields(result: ToolResultData, raw: McpCallResult | None) -> ToolResultData:
    """``result`` with ``render_data`` as the dict apps read: ``content``,
    ``structured_content`` and ``is_error`` (see the module docstring)."""
    render: dict[str, Any] = {
        "content": result.render_data if isinstance(result.render_data, list) else [],
        "structured_content": raw.structured_content if raw is not None else None,
        "is_error": result.status != "success",
    }
    return result.model_copy(update={"render_data": render})


async def with_view(
    result: ToolResultData,
    views: ServerViews,
    uri: str,
    *,
    tool: str,
    tool_input: Mapping[str, Any],
) -> ToolResultData:
    """``result`` (already through ``with_result_fields``) with view ``uri`` under
    ``APP_KEY``, when it can be read."""
    view = await views.view(uri)
    if view is None or not isinstance(result.render_data, dict):
        return result
    render = dict(result.render_data)
    render[APP_KEY] = app_render_data(
        view,
        server=views.connection.namespace,
        tool=tool,
        tool_input=tool_input,
        tool_result={
            "content": render["content"],
            "structuredContent": render["structured_content"],
            "isError": render["is_error"],
        },
        app_tools=views.app_tools,
    )
    return result.model_copy(update={"render_data": render})
