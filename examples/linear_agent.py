"""A Linear agent: a model with the tools of Linear's MCP server, and nothing else.

    python examples/linear_mcp_auth.py                              # once
    python examples/linear_agent.py "What is assigned to me?"

Environment: ANTHROPIC_API_KEY (Claude plays the agent), or GLOVE_SCRIPT=FILE to play a
JSON script offline (see ScriptedModel.from_json); GLOVE_LINEAR_MCP_URL (default
https://mcp.linear.app/mcp); GLOVE_HOME (its oauth.json holds the tokens linear_mcp_auth.py or
`glove-mcp auth linear` saved). See _settings.py.
"""

from __future__ import annotations

import asyncio
import sys

from _settings import LINEAR_URL, pick_model, token_store

from glove_core import Glove, SubscriberEvent
from glove_core.subscribers import ToolUse, ToolUseResult
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.oauth import OAuthTokenSource

URL = LINEAR_URL
STORE = token_store()
LINEAR = McpCatalogueEntry(
    id="linear", name="Linear", url=URL, description="Issues, projects and cycles in Linear."
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
        STORE, "linear", URL, login_command="python examples/linear_mcp_auth.py"
    )

    async def token(server_id: str) -> str | None:
        return await source.access_token() if await STORE.get("linear") else None

    agent = Glove(
        model=pick_model("linear_agent"),
        system_prompt="You work in the user's Linear workspace: issues and projects. Be brief.",
        server_mode=True,
    )
    agent.add_subscriber(PrintTools())
    adapter = MemoryMcpAdapter("linear-agent", active=["linear"], tokens=token)
    async with await mount_mcp(agent, adapter=adapter, entries=[LINEAR]) as mount:
        if "linear" not in mount.loaded:
            print("could not connect to Linear; log in with: python examples/linear_mcp_auth.py")
            return 1
        agent.build()
        result = await agent.process_request(question)
        print(result.text)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(" ".join(sys.argv[1:]) or "What issues are open?")))
