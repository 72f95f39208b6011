"""Log in to Linear's MCP server once; agents then reuse the stored tokens for weeks.

    python examples/linear_mcp_auth.py              # opens a browser
    python examples/linear_mcp_auth.py --no-browser # over SSH: paste the redirect back

Environment: LINEAR_MCP_URL (default https://mcp.linear.app/mcp), GLOVE_OAUTH_FILE (default
~/.local/share/glove/oauth.json).
"""

from __future__ import annotations

import asyncio
import os
import sys

from glove_mcp.oauth import FsOAuthStore, run_mcp_oauth

URL = os.environ.get("LINEAR_MCP_URL", "https://mcp.linear.app/mcp")
STORE = FsOAuthStore(os.environ.get("GLOVE_OAUTH_FILE", "~/.local/share/glove/oauth.json"))


async def main() -> None:
    result = await run_mcp_oauth(
        URL,
        STORE,
        key="linear",
        port=int(os.environ.get("GLOVE_OAUTH_PORT", "53683")),
        open_browser="--no-browser" not in sys.argv,
        on_progress=lambda text: print(f"  {text}"),
    )
    print(f"linear: {result.status} ({result.tool_count} tools)")


if __name__ == "__main__":
    asyncio.run(main())
