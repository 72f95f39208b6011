"""What the examples read from the environment: the names the ``glove-mcp`` command reads.

- ``GLOVE_NOTION_MCP_URL``, ``GLOVE_LINEAR_MCP_URL``: the servers (default: the hosted ones);
- ``GLOVE_HOME``: the data directory (else ``$XDG_DATA_HOME/glove``, else
  ``~/.local/share/glove``), whose ``oauth.json`` holds the tokens, as for ``glove-mcp auth``;
- ``ANTHROPIC_API_KEY`` and ``GLOVE_MODEL`` for Claude, or ``GLOVE_SCRIPT=FILE`` to play a
  JSON script offline (the format is in the README, "Offline scripts").
"""

from __future__ import annotations

import os
import sys

from glove_core import AnthropicModel, Glove, ModelAdapter, ScriptedModel
from glove_core.subscribers import SubscriberEvent, ToolUse, ToolUseResult
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.oauth import FsOAuthStore
from glove_mcp.oauth.stored_login import stored_logins
from glove_mcp.paths import data_dir as data_dir
from glove_mcp.paths import token_file

__all__ = [
    "LINEAR_URL",
    "NOTION_URL",
    "PrintTools",
    "ask_one_server",
    "data_dir",
    "pick_model",
    "token_store",
]

NOTION_URL = os.environ.get("GLOVE_NOTION_MCP_URL", "https://mcp.notion.com/mcp")
LINEAR_URL = os.environ.get("GLOVE_LINEAR_MCP_URL", "https://mcp.linear.app/mcp")


def token_store() -> FsOAuthStore:
    """The token file ``glove-mcp auth`` writes (``oauth.json`` in the data directory)."""
    return FsOAuthStore(token_file())


def pick_model(example: str) -> ModelAdapter:
    """A scripted model (``GLOVE_SCRIPT``) or Claude; without either, one line and exit 2."""
    script = os.environ.get("GLOVE_SCRIPT")
    if script:
        try:
            return ScriptedModel.from_json(script)
        except ValueError as exc:
            sys.stderr.write(f"{example}: {exc}\n")
            raise SystemExit(2) from None
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        sys.stderr.write(
            f"{example}: no model: set ANTHROPIC_API_KEY, or GLOVE_SCRIPT=FILE to play a JSON "
            "script offline\n"
        )
        raise SystemExit(2)
    return AnthropicModel(os.environ.get("GLOVE_MODEL", "claude-sonnet-4-5"), api_key=key)


class PrintTools:
    """Shows each tool call and its outcome as it happens."""

    async def record(self, event: SubscriberEvent) -> None:
        match event:
            case ToolUse(name=name, input=args):
                print(f"→ {name} {args}")
            case ToolUseResult(name=name, result=result):
                print(f"← {name}: {result.status}")


async def ask_one_server(
    entry: McpCatalogueEntry, system_prompt: str, question: str, *, example: str, login: str
) -> int:
    """Answer ``question`` with a model that has the tools of ``entry`` and nothing else, logged
    in with the stored tokens (refreshed as they expire); 1 when the server cannot be reached."""
    agent = Glove(model=pick_model(example), system_prompt=system_prompt, server_mode=True)
    agent.add_subscriber(PrintTools())
    tokens = stored_logins(token_store(), [entry], lambda id: login)
    adapter = MemoryMcpAdapter(example, active=[entry.id], tokens=tokens)
    async with await mount_mcp(agent, adapter=adapter, entries=[entry]) as mount:
        if entry.id not in mount.loaded:
            print(f"could not connect to {entry.name}; log in with: {login}")
            return 1
        agent.build()
        result = await agent.process_request(question)
        print(result.text)
    return 0
