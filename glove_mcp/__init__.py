"""glove_mcp: MCP servers as tools of a Glove.

The root holds what an application mounts servers with; the rest lives in named submodules:
``glove_mcp.errors`` (every exception), ``glove_mcp.types`` (tools, results and content
blocks), ``glove_mcp.subscribers`` (subscriber events), ``glove_mcp.connect`` (connections, the
shared HTTP pool), ``glove_mcp.oauth`` (logins and tokens), ``glove_mcp.discovery``.

Names are imported on first use, so ``import glove_mcp`` (and the ``glove-mcp`` command's
``--help``) does not pay for the ``mcp`` SDK, which takes over a second to import.
"""

import importlib

# Not typing.TYPE_CHECKING: importing typing alone costs the command's start-up several ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from glove_mcp.adapter import McpAdapter as McpAdapter
    from glove_mcp.adapter import MemoryMcpAdapter as MemoryMcpAdapter
    from glove_mcp.adapter import SqliteMcpAdapter as SqliteMcpAdapter
    from glove_mcp.auth import adapter_auth as adapter_auth
    from glove_mcp.auth import bearer as bearer
    from glove_mcp.auth import headers as headers
    from glove_mcp.catalogue import CatalogueIndex as CatalogueIndex
    from glove_mcp.catalogue import McpCatalogueEntry as McpCatalogueEntry
    from glove_mcp.catalogue import match_entries as match_entries
    from glove_mcp.connect import McpServerConnection as McpServerConnection
    from glove_mcp.connect import connect_mcp as connect_mcp
    from glove_mcp.connect import include_tool as include_tool
    from glove_mcp.errors import GloveMcpError as GloveMcpError
    from glove_mcp.mount import McpMount as McpMount
    from glove_mcp.mount import mount_mcp as mount_mcp
    from glove_mcp.mount.bridge import MCP_NAMESPACE_SEP as MCP_NAMESPACE_SEP
    from glove_mcp.mount.bridge import bridge_mcp_tool as bridge_mcp_tool
    from glove_mcp.mount.bridge import json_schema_to_shape as json_schema_to_shape
    from glove_mcp.mount.bridge import untrusted_output as untrusted_output
    from glove_mcp.types import McpCallResult as McpCallResult
    from glove_mcp.types import McpTool as McpTool

__all__ = [
    "MCP_NAMESPACE_SEP",
    "CatalogueIndex",
    "GloveMcpError",
    "McpAdapter",
    "McpCallResult",
    "McpCatalogueEntry",
    "McpMount",
    "McpServerConnection",
    "McpTool",
    "MemoryMcpAdapter",
    "SqliteMcpAdapter",
    "adapter_auth",
    "bearer",
    "bridge_mcp_tool",
    "connect_mcp",
    "headers",
    "include_tool",
    "json_schema_to_shape",
    "match_entries",
    "mount_mcp",
    "untrusted_output",
]

_HOMES = {
    "CatalogueIndex": "glove_mcp.catalogue",
    "GloveMcpError": "glove_mcp.errors",
    "MCP_NAMESPACE_SEP": "glove_mcp.mount.bridge",
    "McpAdapter": "glove_mcp.adapter",
    "McpCallResult": "glove_mcp.types",
    "McpCatalogueEntry": "glove_mcp.catalogue",
    "McpMount": "glove_mcp.mount",
    "McpServerConnection": "glove_mcp.connect",
    "McpTool": "glove_mcp.types",
    "MemoryMcpAdapter": "glove_mcp.adapter",
    "SqliteMcpAdapter": "glove_mcp.adapter",
    "adapter_auth": "glove_mcp.auth",
    "bearer": "glove_mcp.auth",
    "bridge_mcp_tool": "glove_mcp.mount.bridge",
    "connect_mcp": "glove_mcp.connect",
    "headers": "glove_mcp.auth",
    "include_tool": "glove_mcp.connect",
    "json_schema_to_shape": "glove_mcp.mount.bridge",
    "match_entries": "glove_mcp.catalogue",
    "mount_mcp": "glove_mcp.mount",
    "untrusted_output": "glove_mcp.mount.bridge",
}


def __getattr__(name: str) -> "Any":
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
