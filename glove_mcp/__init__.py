"""glove_mcp: MCP servers as tools of a Glove."""

__all__: list[str] = []
