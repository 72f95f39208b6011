"""Discovery: the ``find_capability`` subagent that activates MCP servers mid-conversation."""

from glove_mcp.discovery.capability import FIND_CAPABILITY as FIND_CAPABILITY
from glove_mcp.discovery.capability import MCP_PICKER as MCP_PICKER
from glove_mcp.discovery.capability import DiscoveryMount as DiscoveryMount
from glove_mcp.discovery.capability import discovery_tool as discovery_tool
from glove_mcp.discovery.prompts import DEFAULT_CATALOGUE_BUDGET as DEFAULT_CATALOGUE_BUDGET
from glove_mcp.discovery.prompts import compact_catalogue as compact_catalogue
from glove_mcp.discovery.prompts import policy_prompt as policy_prompt

__all__ = [
    "DEFAULT_CATALOGUE_BUDGET",
    "FIND_CAPABILITY",
    "MCP_PICKER",
    "DiscoveryMount",
    "compact_catalogue",
    "discovery_tool",
    "policy_prompt",
]
