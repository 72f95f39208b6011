"""A headless agent server: one agent per session over HTTP, sessions kept in SQLite.

    export GLOVE_API_KEY=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
    python examples/headless_server.py
    curl -s -X POST -H "Authorization: Bearer $GLOVE_API_KEY" http://127.0.0.1:8765/sessions
    curl -N -X POST -H "Authorization: Bearer $GLOVE_API_KEY" \\
         -d '{"text": "What is open in Linear?"}' \\
         http://127.0.0.1:8765/sessions/<id>/messages

Environment: GLOVE_API_KEY (required, 20 characters or more), ANTHROPIC_API_KEY or
GLOVE_SCRIPT=FILE, GLOVE_LINEAR_MCP_URL, GLOVE_HOME (where the tokens are), GLOVE_DB (default
./agents.db), PORT (default 8765; 0 picks a free one). See _settings.py.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import sys
from contextlib import AsyncExitStack

import uvicorn
from _settings import LINEAR_URL, pick_model, token_store

from glove_core import (
    EventsConfig,
    Glove,
    SqliteEventQueue,
)
from glove_mcp import McpCatalogueEntry, SqliteMcpAdapter, mount_mcp
from glove_mcp.connect import McpClientPool
from glove_mcp.oauth import OAuthTokenSource
from glove_mcp.server import HeadlessServer, HttpLimits, SessionStore, uvicorn_config

DB = os.environ.get("GLOVE_DB", "agents.db")
STORE = token_store()
LINEAR = McpCatalogueEntry(
    id="linear",
    name="Linear",
    url=LINEAR_URL,
    description="Create, update and search issues and projects in Linear.",
)
SOURCE = OAuthTokenSource(STORE, "linear", LINEAR.url)


async def token(server_id: str) -> str | None:
    return await SOURCE.access_token() if await STORE.get("linear") else None


async def agent_for(
    session_id: str, store: SessionStore, stack: AsyncExitStack, *, pool: McpClientPool
) -> Glove:
    # Outside events wait in the database: they outlive the session being closed when idle.
    queue = SqliteEventQueue(DB, session_id)
    stack.push_async_callback(queue.aclose)
    agent = Glove(
        model=pick_model("headless_server"),
        system_prompt="You manage the team's Linear issues. Be brief.",
        store=store,
        server_mode=True,
        events=EventsConfig(queue=queue),
    )
    adapter = SqliteMcpAdapter(DB, session_id, tokens=token)
    stack.push_async_callback(adapter.aclose)
    if not await adapter.get_active():
        await adapter.activate("linear")  # every session starts with Linear
    mount = await mount_mcp(agent, adapter=adapter, entries=[LINEAR], pool=pool)
    stack.push_async_callback(mount.aclose)
    return agent


async def main() -> None:
    # One HTTP transport (sockets, TLS context) for every session's mount, closed last.
    pool = McpClientPool()
    server = HeadlessServer(
        DB, os.environ.get("GLOVE_API_KEY", ""), functools.partial(agent_for, pool=pool)
    )
    pick_model("headless_server")  # no key and no script: one line now, not at each session
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", int(os.environ.get("PORT", "8765"))))
    sock.listen(2048)  # before printing the URL: a client may connect at once
    print(f"serving on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    # Header and keep-alive deadlines and a connection cap (HttpLimits() defaults).
    config = uvicorn_config(server.app, HttpLimits(), log_level="warning")
    async with pool:
        await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except ValueError as exc:  # e.g. no API key: the server refuses to start
        sys.exit(f"headless_server: {exc}")
