"""Catalogue + adapter -> tools of a ``Glove``: the mount (``McpMount``, made by ``mount_mcp``),
its options, listing limits, bridging, results and tool-name learning."""

from glove_mcp.mount.mcp_mount import DEFAULT_LISTING_LIMITS as DEFAULT_LISTING_LIMITS
from glove_mcp.mount.mcp_mount import AmbiguityPolicy as AmbiguityPolicy
from glove_mcp.mount.mcp_mount import ListingLimits as ListingLimits
from glove_mcp.mount.mcp_mount import McpMount as McpMount
from glove_mcp.mount.mcp_mount import McpServerActivated as McpServerActivated
from glove_mcp.mount.mcp_mount import McpServerDeactivated as McpServerDeactivated
from glove_mcp.mount.mcp_mount import McpServerFailed as McpServerFailed
from glove_mcp.mount.mcp_mount import MountState as MountState
from glove_mcp.mount.mcp_mount import WrapTool as WrapTool
from glove_mcp.mount.mcp_mount import mount_mcp as mount_mcp

__all__ = [
    "DEFAULT_LISTING_LIMITS",
    "AmbiguityPolicy",
    "ListingLimits",
    "McpMount",
    "McpServerActivated",
    "McpServerDeactivated",
    "McpServerFailed",
    "MountState",
    "WrapTool",
    "mount_mcp",
]
