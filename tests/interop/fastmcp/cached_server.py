# mypy: ignore-errors
# (Runs in its own venv with FastMCP; the project's venv, where mypy runs, has none.)
"""A FastMCP 4 server whose lists are cacheable, run in .venv.

``python cached_server.py PORT SCOPE`` serves Streamable HTTP at ``http://127.0.0.1:PORT/mcp``
with lists that carry ``ttlMs`` 600000 and ``cacheScope`` SCOPE (``public`` or ``private``);
each ``tools/list`` it answers is counted, and ``list_count`` returns the count. ``grow`` adds a
tool (FastMCP then tells listening clients the list changed).
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware, MiddlewareContext

mcp = FastMCP("glove-cached", cache_ttl=600, cache_scope=sys.argv[2])
_listed = {"tools": 0}


class CountLists(Middleware):
    async def on_list_tools(self, context: MiddlewareContext, call_next):
        _listed["tools"] += 1
        return await call_next(context)


mcp.add_middleware(CountLists())


@mcp.tool()
def list_count() -> int:
    """How many tools/list requests the server answered."""
    return _listed["tools"]


@mcp.tool()
def echo(word: str) -> str:
    """Echo a word."""
    return word


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
