"""Log in to Notion's MCP server once; agents then reuse the stored tokens for weeks.

    python examples/notion_mcp_auth.py              # opens a browser
    python examples/notion_mcp_auth.py --no-browser # over SSH: paste the redirect back

Environment: GLOVE_NOTION_MCP_URL (default https://mcp.notion.com/mcp); GLOVE_HOME (the tokens go
to its oauth.json, where `glove-mcp` finds them); GLOVE_OAUTH_PORT (the callback port).
"""

from __future__ import annotations

import asyncio
import os
import sys

from _settings import NOTION_URL, token_store

from glove_mcp.oauth import run_mcp_oauth

URL = NOTION_URL
STORE = token_store()


async def main() -> None:
    result = await run_mcp_oauth(
        URL,
        STORE,
        key="notion",
        port=int(os.environ.get("GLOVE_OAUTH_PORT", "53683")),
        open_browser="--no-browser" not in sys.argv,
        on_progress=lambda text: print(f"  {text}"),
    )
    print(f"notion: {result.status} ({result.tool_count} tools)")


if __name__ == "__main__":
    asyncio.run(main())
