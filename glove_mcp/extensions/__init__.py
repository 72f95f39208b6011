"""MCP extensions the client understands, as plain data: skills (``io.modelcontextprotocol/
skills``) and apps (``io.modelcontextprotocol/ui``). Nothing here imports the MCP SDK, so the
headless server may read an app's view from a tool result's ``render_data``."""

__all__: list[str] = []
