# mypy: ignore-errors
# (Runs in its own venv with FastMCP; the project's venv, where mypy runs, has none.)
"""A FastMCP 4 server with the tasks extension (fastmcp-tasks), run in tasks/.venv.

``python tasks_server.py PORT`` serves Streamable HTTP at ``http://127.0.0.1:PORT/mcp``:

- ``slow_sum(a, b, seconds)`` (task required): waits, then returns ``a + b``;
- ``failing(why)`` (task required): raises a tool error with ``why``;
- ``quick(word)`` (no task): echoes ``word``.
"""

from __future__ import annotations

import asyncio
import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("glove-tasks")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=TaskConfig(mode="required"))
async def slow_sum(a: int, b: int, seconds: float) -> int:
    """Add two numbers, slowly."""
    await asyncio.sleep(seconds)
    return a + b


@mcp.tool(task=TaskConfig(mode="required"))
async def failing(why: str) -> str:
    """Fail with the reason given."""
    raise ToolError(why)


@mcp.tool()
def quick(word: str) -> str:
    """Echo a word at once."""
    return word


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
