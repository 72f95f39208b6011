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

from _settings import NOTION_URL, ask_one_server

from glove_mcp import McpCatalogueEntry

URL = NOTION_URL
NOTION = McpCatalogueEntry(
    id="notion", name="Notion", url=URL, description="Pages, databases and comments in Notion."
)


if __name__ == "__main__":
    question = " ".join(sys.argv[1:]) or "What pages do I have?"
    sys.exit(
        asyncio.run(
            ask_one_server(
                NOTION,
                "You answer from the user's Notion workspace. Be brief.",
                question,
                example="notion_agent",
                login="python examples/notion_mcp_auth.py",
            )
        )
    )
