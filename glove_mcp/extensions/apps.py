"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865, stable 2026-01-26): tools
that render their results in an interactive ``ui://`` view the host shows in a sandboxed frame.

A mount made with ``apps=True`` declares the extension (only a host that can render views
should: the web page of ``glove-mcp serve --web`` can, the terminal chat cannot). A bridged
tool with ``_meta.ui.resourceUri`` then reads its view (``McpServerConnection.read_app_view``)
and hands it to the application in the result's ``render_data`` under ``APP_KEY`` (see
``app_render_data``); the model sees only the tool's text, as without apps. Tools whose
visibility leaves out ``"model"`` are never offered to the model: they are offered switched
off, for the view alone (an application calls them with ``Glove.run_tool``).

This module knows no HTTP and no SDK: the headless server reads ``render_data`` as plain data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "APP_KEY",
    "APP_MIME_TYPE",
    "MAX_VIEW_CHARS",
    "UI_EXTENSION",
    "McpAppView",
    "app_render_data",
    "csp_from_wire",
    "declared_origins",
]

UI_EXTENSION = "io.modelcontextprotocol/ui"
"""The extension's identifier, in ``capabilities.extensions``."""

APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The one view type the 2026-01-26 text defines."""

APP_KEY = "mcp_app"
"""The key of a result's ``render_data`` that holds the view (``app_render_data``)."""

MAX_VIEW_CHARS = 512 * 1024
"""The largest view kept, in characters; a larger one is not shown (the text result is)."""

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# An origin as the extension's CSP lists them: a scheme, a host (a leading "*." allowed) and
# an optional port; nothing a CSP directive could be broken out of (";", ",", quotes, spaces).
_ORIGIN = re.compile(r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9.-]+(?::\d{1,5})?")


class McpAppView(BaseModel):
    """A view as ``resources/read`` returned it.

    Attributes:
        uri: its ``ui://`` URI.
        html: the HTML document.
        csp: the origins it declared (``_meta.ui.csp``): ``connectDomains``,
            ``resourceDomains``, ``frameDomains``, ``baseUriDomains``; only well-formed
            origins are kept, and what is not declared is not allowed.
        prefers_border: ``_meta.ui.prefersBorder``, when said.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: str
    html: str
    csp: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    prefers_border: bool | None = None


def csp_from_wire(meta: object) -> dict[str, tuple[str, ...]]:
    """The declared origins of a view's ``_meta`` (``ui.csp``), well-formed ones only."""
    if not isinstance(meta, Mapping):
        return {}
    ui = meta.get("ui")
    csp = ui.get("csp") if isinstance(ui, Mapping) else None
    if not isinstance(csp, Mapping):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for key in _CSP_KEYS:
        values = csp.get(key)
        if isinstance(values, list):
            kept = tuple(v for v in values if isinstance(v, str) and _ORIGIN.fullmatch(v))
            if kept:
                found[key] = kept
    return found


def app_render_data(
    view: McpAppView,
    *,
    server: str,
    tool: str,
    tool_input: Mapping[str, Any],
    tool_result: Mapping[str, Any],
    app_tools: Mapping[str, str],
) -> dict[str, Any]:
    """What a host needs to show ``view`` for one tool call (``render_data[APP_KEY]``).

    Args:
        view: the view.
        server: the catalogue id of its server.
        tool: the bridged name of the tool whose result it shows.
        tool_input: the call's arguments (``ui/notifications/tool-input``).
        tool_result: the call's result in MCP's JSON shape (``content``,
            ``structuredContent``, ``isError``; ``ui/notifications/tool-result``).
        app_tools: the server's tools the view may call: the server's name → the bridged
            name an application passes to ``Glove.run_tool``.
    """
    return {
        "server": server,
        "tool": tool,
        "uri": view.uri,
        "html": view.html,
        "csp": {k: list(v) for k, v in view.csp.items()},
        "prefers_border": view.prefers_border,
        "tool_input": dict(tool_input),
        "tool_result": dict(tool_result),
        "app_tools": dict(app_tools),
    }


def declared_origins(csp: Mapping[str, Sequence[str]], key: str) -> list[str]:
    """The well-formed origins under ``key`` of a declared CSP (for a host building one)."""
    values = csp.get(key) or ()
    return [v for v in values if isinstance(v, str) and _ORIGIN.fullmatch(v)]
