"""A server built with the mcp SDK that talks back: progress, log messages, list changes and
instructions, for tests of what a connection and a mount do with them."""

from __future__ import annotations

import asyncio
import warnings

from mcp.server.mcpserver import Context, MCPServer

INSTRUCTIONS = "Probe server: call steps to watch progress."


def build_probe_server(instructions: str | None = INSTRUCTIONS) -> MCPServer:
    """A fresh probe server (its tool list changes as ``grow`` and ``shrink`` are called)."""
    server = MCPServer("probe", instructions=instructions, log_level="WARNING")

    @server.tool()
    async def steps(n: int, pause: float, ctx: Context) -> str:
        """Report progress n times, pausing between reports."""
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1} of {n}")
            await asyncio.sleep(pause)
        return f"{n} steps done"

    @server.tool()
    async def chatter(n: int, ctx: Context) -> str:
        """Send n log messages."""
        with warnings.catch_warnings():
            # Logging is deprecated in the 2026-07-28 revision, still sent by servers.
            warnings.simplefilter("ignore")
            for i in range(n):
                await ctx.info(f"message {i}")
        return f"{n} messages sent"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool extra."""

        def extra(word: str) -> str:
            """Echo a word."""
            return f"extra: {word}"

        server.add_tool(extra)
        await _changed(server, ctx)
        return "grown"

    @server.tool()
    async def shrink(ctx: Context) -> str:
        """Remove the tool extra."""
        server.remove_tool("extra")
        await _changed(server, ctx)
        return "shrunk"

    return server


async def _changed(server: MCPServer, ctx: Context) -> None:
    # Both eras: subscriptions/listen streams (2026-07-28), and the notification on the
    # session for handshake-era clients.
    await ctx.notify_tools_changed()
    if ctx.protocol_version != "2026-07-28":
        await ctx.session.send_tool_list_changed()
