"""glove_mcp: MCP servers as tools of a Glove."""

from glove_mcp.catalogue import McpCatalogueEntry as McpCatalogueEntry

__all__ = ["McpCatalogueEntry"]
