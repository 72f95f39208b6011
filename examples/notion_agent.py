"""A Notion agent: a model with the tools of Notion's MCP server, and nothing else.

    python examples/notion_mcp_auth.py                              # once
    python examples/notion_agent.py "Find the onboarding page and summarise it"

Environment: ANTHROPIC_API_KEY (Claude plays the agent), or GLOVE_SCRIPT=FILE to play a
JSON script offline (see ScriptedModel.from_json); NOTION_MCP_URL (default
https://mcp.notion.com/mcp); GLOVE_OAUTH_FILE (where notion_mcp_auth.py saved the tokens).
"""

from __future__ import annotations

import asyncio
import os
import sys

from glove_core import AnthropicModel, Glove, ModelAdapter, ScriptedModel, SubscriberEvent
from glove_core.subscribers import ToolUse, ToolUseResult
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.oauth import FsOAuthStore, OAuthTokenSource

URL = os.environ.get("NOTION_MCP_URL", "https://mcp.notion.com/mcp")
STORE = FsOAuthStore(os.environ.get("GLOVE_OAUTH_FILE", "~/.local/share/glove/oauth.json"))
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


def pick_model() -> ModelAdapter:
    if "GLOVE_SCRIPT" in os.environ:
        return ScriptedModel.from_json(os.environ["GLOVE_SCRIPT"])
    return AnthropicModel(os.environ.get("GLOVE_MODEL", "claude-sonnet-4-5"))


async def main(question: str) -> int:
    source = OAuthTokenSource(
        STORE, "notion", URL, login_command="python examples/notion_mcp_auth.py"
    )

    async def token(server_id: str) -> str | None:
        return await source.access_token() if await STORE.get("notion") else None

    agent = Glove(
        model=pick_model(),
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
