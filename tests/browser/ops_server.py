"""A local MCP server for the browser test: ``python -m tests.browser.ops_server``.

Its one tool, ``deploy``, changes things (no read-only hint, so the agent asks permission
first) and asks the person for a reason through an elicitation before it answers. Prints the
server URL on the first line, then serves until stdin closes.
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from glove_mcp.testing import McpTestServer


class Reason(BaseModel):
    """What the elicitation asks for."""

    reason: str = Field(title="Reason", description="why deploy now")


def build_ops_server() -> MCPServer:
    """The ``ops`` server."""
    server = MCPServer("ops", log_level="WARNING")

    @server.tool()
    async def deploy(target: str, ctx: Context) -> str:
        """Deploy the current build to a target.

        Args:
            target: where to deploy, e.g. prod.
        """
        answer = await ctx.elicit(f"Why deploy to {target}?", Reason)
        if answer.action != "accept":
            return f"not deployed ({answer.action})"
        return f"deployed to {target}: {answer.data.reason}"

    return server


async def _main() -> None:
    async with McpTestServer(build_ops_server()) as server:
        sys.stdout.write(server.url + "\n")
        sys.stdout.flush()
        loop = asyncio.get_running_loop()
        while await loop.run_in_executor(None, sys.stdin.readline):
            pass


if __name__ == "__main__":
    asyncio.run(_main())
