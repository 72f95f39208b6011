"""A stdio MCP server whose one tool answers with the ``_meta`` of the request that called it:
``python -m tests.glove_mcp.connect.meta_server`` (what a stdio server receives, seen from it)."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

__all__ = ["build_meta_server"]


def build_meta_server() -> MCPServer:
    """The server: ``request_meta`` returns the request's ``_meta`` as JSON text."""
    server = MCPServer("meta", log_level="WARNING")

    @server.tool()
    async def request_meta(ctx: Context[Any, Any]) -> str:
        """The ``_meta`` this request carried."""
        meta = ctx.request_context.meta
        return json.dumps(dict(meta) if meta else {})

    return server


if __name__ == "__main__":
    build_meta_server().run("stdio")
