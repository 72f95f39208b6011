"""A local MCP server whose answers are as large, as many or as malformed as asked, for tests
and benchmarks of the bounds on results (``python -m glove_mcp.testing sizes``).

Tools: ``text(chars)`` a text result of ``chars`` characters; ``failing(chars)`` an
``isError`` result of that size; ``rpc_error(chars)`` a JSON-RPC error whose message has that
size; ``images(count, data, mime_type)`` ``count`` image blocks of the given base64 ``data``;
``chatty(events, chars)`` that many progress notifications of ``chars`` characters each before a
short answer; ``echo(text)`` returns ``text`` as it is.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

__all__ = ["SIZES_TOOL_NAMES", "build_sizes_server"]

SIZES_TOOL_NAMES = ("chatty", "echo", "failing", "images", "rpc_error", "text")
"""Every tool of the sizes server."""

_READ_ONLY = types.ToolAnnotations(read_only_hint=True)


def build_sizes_server(name: str = "sizes", **server_kwargs: Any) -> MCPServer:
    """A fresh sizes server (see the module docstring)."""
    server_kwargs.setdefault("log_level", "WARNING")
    server = MCPServer(name, **server_kwargs)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def text(chars: int) -> str:
        """A text of ``chars`` characters."""
        return ("0123456789" * (chars // 10 + 1))[:chars]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def failing(chars: int) -> str:
        """Fails with a message of ``chars`` characters."""
        raise ToolError("e" * chars)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def rpc_error(chars: int) -> str:
        """Answers with a JSON-RPC error whose message has ``chars`` characters."""
        raise MCPError(types.INTERNAL_ERROR, "r" * chars)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def images(count: int, data: str, mime_type: str = "image/png") -> list[Any]:
        """``count`` image blocks of base64 ``data``."""
        return [types.ImageContent(data=data, mime_type=mime_type) for _ in range(count)]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def chatty(events: int, chars: int, ctx: Context) -> str:
        """``events`` progress notifications with messages of ``chars`` characters, then
        "done"."""
        for done in range(events):
            await ctx.report_progress(done, events, "m" * chars)
        return "done"

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def echo(text: str) -> str:
        """``text`` as it is."""
        return text

    return server
