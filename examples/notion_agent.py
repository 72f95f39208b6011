"""A Notion agent: a model with the tools of Notion's MCP server, and nothing else.

    python examples/notion_mcp_auth.py                              # once
    python examples/notion_agent.py "Find the onboarding page and summarise it"

Environment: ANTHROPIC_API_KEY (Claude plays the agent), or GLOVE_SCRIPT=FILE to play a
JSON script offline (the format: README, "Offline scripts"); GLOVE_NOTION_MCP_URL (default
https://mcp.notion.com/mcp); GLOVE_HOME (its oauth.json holds the tokens notion_mcp_auth.py or
`glove-mcp auth notion` saved). See _settings.py.
"""

from __future__ import annotations

import asyncio
import sys

from _settings import NOTION_URL, pick_model, token_store

from glove_core import Glove, SubscriberEvent
from glove_core.subscribers import ToolUse, ToolUseResult
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.oauth import OAuthTokenSource

URL = NOTION_URL
STORE = token_store()
NOTION = McpCatalogueEntry(
    id="notion", name="Notion", url=URL, description="Pages, databases and comments in Notion."
)


class PrintTools:
    """Shows each tool call and its outcome as it happens."""

    async def record(self, event: SubscriberEvent) -> None:
        match event:
            case ToolUse(name=name, input=args):
                print(f"→ {name} {args}")
            case ToolUseResult(name=name, result=result):
                print(f"← {name}: {result.status}")


async def main(question: str) -> int:
    source = OAuthTokenSource(
        STORE, "notion", URL, login_command="python examples/notion_mcp_auth.py"
    )

    async def token(server_id: str) -> str | None:
        return await source.access_token() if await STORE.get("notion") else None

    agent = Glove(
        model=pick_model("notion_agent"),
        system_prompt="You answer from the user's Notion workspace. Be brief.",
        server_mode=True,
    )
    agent.add_subscriber(PrintTools())
    adapter = MemoryMcpAdapter("notion-agent", active=["notion"], tokens=token)
    async with await mount_mcp(agent, adapter=adapter, entries=[NOTION]) as mount:
        if "notion" not in mount.loaded:
            print("could not connect to Notion; log in with: python examples/notion_mcp_auth.py")
            return 1
        agent.build()
        result = await agent.process_request(question)
        print(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(" ".join(sys.argv[1:]) or "What pages do I have?")))
