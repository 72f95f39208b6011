"""One MCP server, no ``Glove``: the connection (``McpServerConnection``, opened with
``connect_mcp``), its MCP session and transport, recovery, calls, tasks, MCP resources, and the
client side of the requests an MCP server sends (sampling, elicitation, roots, progress,
logging)."""

from glove_mcp.connect.connection import ClientInfo as ClientInfo
from glove_mcp.connect.connection import ConnectionState as ConnectionState
from glove_mcp.connect.connection import McpClientPool as McpClientPool
from glove_mcp.connect.connection import McpServerConnection as McpServerConnection
from glove_mcp.connect.connection import ProtocolChoice as ProtocolChoice
from glove_mcp.connect.connection import ToolFilter as ToolFilter
from glove_mcp.connect.connection import connect_mcp as connect_mcp
from glove_mcp.connect.connection import include_tool as include_tool
from glove_mcp.connect.list_cache import ListCache as ListCache

__all__ = [
    "ClientInfo",
    "ConnectionState",
    "ListCache",
    "McpClientPool",
    "McpServerConnection",
    "ProtocolChoice",
    "ToolFilter",
    "connect_mcp",
    "include_tool",
]
