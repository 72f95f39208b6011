"""Which server tools are offered: ``include_tool`` and the ``ToolFilter`` it applies."""

from __future__ import annotations

from collections.abc import Callable, Collection

from glove_mcp.types import McpTool

__all__ = ["ToolFilter", "include_tool"]

ToolFilter = Callable[[str, McpTool], bool]
"""``filter_tools(namespace, tool) -> bool``: False hides the tool from every consumer."""


def include_tool(
    namespace: str,
    tool: McpTool,
    exclude_tools: Collection[str] = (),
    filter_tools: ToolFilter | None = None,
) -> bool:
    """The single gate deciding whether a server tool is offered: not in ``exclude_tools``
    (exact, un-namespaced names) and accepted by ``filter_tools(namespace, tool)``. (Tools
    whose ``task_support`` is ``"required"`` are offered: ``call_tool`` runs them as tasks.)

    Args:
        namespace: the server's id.
        tool: the tool as the server listed it.
        exclude_tools: server tool names never offered.
        filter_tools: returns False for tools to hide.

    Returns:
        Whether the tool is offered.
    """
    if tool.name in exclude_tools:
        return False
    return filter_tools is None or bool(filter_tools(namespace, tool))
