"""A terminal agent over several MCP servers; it activates the ones it needs as it goes.

    python examples/multi_mcp_cli.py

The agent starts with no server active. When it needs one, it calls find_capability, a small
subagent picks the server from the catalogue and activates it, and its tools are offered from
the agent's next step. Type /quit to leave.

Environment: ANTHROPIC_API_KEY, or GLOVE_SCRIPT=FILE to play a JSON script offline;
GLOVE_NOTION_MCP_URL, GLOVE_LINEAR_MCP_URL (defaults: the hosted servers); GLOVE_HOME (where
the tokens are, as for `glove-mcp auth`). See _settings.py.
"""

from __future__ import annotations

import asyncio
import sys

from _settings import LINEAR_URL, NOTION_URL, pick_model, token_store

from glove_core import Glove, SubscriberEvent
from glove_core.subscribers import TextDelta, ToolUse, ToolUseResult
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.oauth import OAuthTokenSource

STORE = token_store()
CATALOGUE = [
    McpCatalogueEntry(
        id="notion",
        name="Notion",
        url=NOTION_URL,
        description="Search, read and write pages and databases in Notion.",
        tags=["docs", "notes", "wiki"],
    ),
    McpCatalogueEntry(
        id="linear",
        name="Linear",
        url=LINEAR_URL,
        description="Create, update and search issues and projects in Linear.",
        tags=["issues", "tickets"],
    ),
]


class Stream:
    """Prints reply text as it streams, and each tool call."""

    async def record(self, event: SubscriberEvent) -> None:
        match event:
            case TextDelta(text=text):
                print(text, end="", flush=True)
            case ToolUse(name=name):
                print(f"\n→ {name}", flush=True)
            case ToolUseResult(name=name, result=result):
                print(f"← {name}: {result.status}", flush=True)


async def main() -> None:
    sources = {e.id: OAuthTokenSource(STORE, e.id, e.url) for e in CATALOGUE}

    async def token(server_id: str) -> str | None:
        return await sources[server_id].access_token() if await STORE.get(server_id) else None

    agent = Glove(
        model=pick_model("multi_mcp_cli"),
        system_prompt="You help with the user's notes and "
        "issues. Use find_capability when you lack a tool. Be brief.",
        server_mode=True,
    )
    agent.add_subscriber(Stream())
    adapter = MemoryMcpAdapter("multi-cli", tokens=token)
    async with await mount_mcp(agent, adapter=adapter, entries=CATALOGUE) as mount, agent:
        agent.build()
        while True:
            line = await asyncio.to_thread(input, "\nyou> ")
            if line.strip() in ("/quit", "/exit"):
                break
            if line.strip():
                await agent.process_request(line)
        print(f"\nactive servers at the end: {', '.join(mount.loaded) or 'none'}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (EOFError, KeyboardInterrupt):
        sys.exit(0)
