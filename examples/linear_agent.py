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

from _settings import LINEAR_URL, ask_one_server

from glove_mcp import McpCatalogueEntry

URL = LINEAR_URL
LINEAR = McpCatalogueEntry(
    id="linear", name="Linear", url=URL, description="Issues, projects and cycles in Linear."
)


if __name__ == "__main__":
    question = " ".join(sys.argv[1:]) or "What issues are open?"
    sys.exit(
        asyncio.run(
            ask_one_server(
                LINEAR,
                "You work in the user's Linear workspace: issues and projects. Be brief.",
                question,
                example="linear_agent",
                login="python examples/linear_mcp_auth.py",
            )
        )
    )
