"""glove_mcp: MCP servers as tools of a Glove."""

from glove_mcp.adapter import McpAdapter as McpAdapter
from glove_mcp.adapter import MemoryMcpAdapter as MemoryMcpAdapter
from glove_mcp.adapter import SqliteMcpAdapter as SqliteMcpAdapter
from glove_mcp.auth import McpAuth as McpAuth
from glove_mcp.auth import TokenSource as TokenSource
from glove_mcp.auth import adapter_auth as adapter_auth
from glove_mcp.auth import bearer as bearer
from glove_mcp.auth import headers as headers
from glove_mcp.bridge import MCP_NAMESPACE_SEP as MCP_NAMESPACE_SEP
from glove_mcp.bridge import bridge_mcp_tool as bridge_mcp_tool
from glove_mcp.bridge import bridged_tool_name as bridged_tool_name
from glove_mcp.bridge import convert_call_result as convert_call_result
from glove_mcp.bridge import json_schema_to_shape as json_schema_to_shape
from glove_mcp.catalogue import CatalogueIndex as CatalogueIndex
from glove_mcp.catalogue import CatalogueItem as CatalogueItem
from glove_mcp.catalogue import McpCatalogueEntry as McpCatalogueEntry
from glove_mcp.catalogue import match_entries as match_entries
from glove_mcp.connect import ClientInfo as ClientInfo
from glove_mcp.connect import ConnectionState as ConnectionState
from glove_mcp.connect import McpClientPool as McpClientPool
from glove_mcp.connect import McpServerConnection as McpServerConnection
from glove_mcp.connect import ProtocolChoice as ProtocolChoice
from glove_mcp.connect import ToolFilter as ToolFilter
from glove_mcp.connect import connect_mcp as connect_mcp
from glove_mcp.connect import include_tool as include_tool
from glove_mcp.errors import GloveMcpError as GloveMcpError
from glove_mcp.errors import McpActivationError as McpActivationError
from glove_mcp.errors import McpAuthExpiredError as McpAuthExpiredError
from glove_mcp.errors import McpConnectionError as McpConnectionError
from glove_mcp.errors import McpInsufficientScopeError as McpInsufficientScopeError
from glove_mcp.errors import McpProtocolError as McpProtocolError
from glove_mcp.errors import McpServerUnavailableError as McpServerUnavailableError
from glove_mcp.errors import McpSessionExpiredError as McpSessionExpiredError
from glove_mcp.errors import McpStateError as McpStateError
from glove_mcp.errors import McpTimeoutError as McpTimeoutError
from glove_mcp.errors import McpUnknownServerError as McpUnknownServerError
from glove_mcp.events import McpEvent as McpEvent
from glove_mcp.events import McpServerActivated as McpServerActivated
from glove_mcp.events import McpServerDeactivated as McpServerDeactivated
from glove_mcp.events import McpServerFailed as McpServerFailed
from glove_mcp.mount import AmbiguityPolicy as AmbiguityPolicy
from glove_mcp.mount import McpMount as McpMount
from glove_mcp.mount import MountState as MountState
from glove_mcp.mount import WrapTool as WrapTool
from glove_mcp.mount import mount_mcp as mount_mcp
from glove_mcp.types import McpAudioContent as McpAudioContent
from glove_mcp.types import McpCallResult as McpCallResult
from glove_mcp.types import McpContent as McpContent
from glove_mcp.types import McpContentAnnotations as McpContentAnnotations
from glove_mcp.types import McpEmbeddedResource as McpEmbeddedResource
from glove_mcp.types import McpImageContent as McpImageContent
from glove_mcp.types import McpResourceContents as McpResourceContents
from glove_mcp.types import McpResourceLink as McpResourceLink
from glove_mcp.types import McpTextContent as McpTextContent
from glove_mcp.types import McpTool as McpTool
from glove_mcp.types import McpToolAnnotations as McpToolAnnotations
from glove_mcp.types import TaskSupport as TaskSupport

__all__ = [
    "MCP_NAMESPACE_SEP",
    "AmbiguityPolicy",
    "CatalogueIndex",
    "CatalogueItem",
    "ClientInfo",
    "ConnectionState",
    "GloveMcpError",
    "McpActivationError",
    "McpAdapter",
    "McpAudioContent",
    "McpAuth",
    "McpAuthExpiredError",
    "McpCallResult",
    "McpCatalogueEntry",
    "McpClientPool",
    "McpConnectionError",
    "McpContent",
    "McpContentAnnotations",
    "McpEmbeddedResource",
    "McpEvent",
    "McpImageContent",
    "McpInsufficientScopeError",
    "McpMount",
    "McpProtocolError",
    "McpResourceContents",
    "McpResourceLink",
    "McpServerActivated",
    "McpServerConnection",
    "McpServerDeactivated",
    "McpServerFailed",
    "McpServerUnavailableError",
    "McpSessionExpiredError",
    "McpStateError",
    "McpTextContent",
    "McpTimeoutError",
    "McpTool",
    "McpToolAnnotations",
    "McpUnknownServerError",
    "MemoryMcpAdapter",
    "MountState",
    "ProtocolChoice",
    "SqliteMcpAdapter",
    "TaskSupport",
    "TokenSource",
    "ToolFilter",
    "WrapTool",
    "adapter_auth",
    "bearer",
    "bridge_mcp_tool",
    "bridged_tool_name",
    "connect_mcp",
    "convert_call_result",
    "headers",
    "include_tool",
    "json_schema_to_shape",
    "match_entries",
    "mount_mcp",
]
