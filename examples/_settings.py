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

from glove_core import AnthropicModel, ModelAdapter, ScriptedModel
from glove_mcp.oauth import FsOAuthStore

__all__ = ["LINEAR_URL", "NOTION_URL", "data_dir", "pick_model", "token_store"]

NOTION_URL = os.environ.get("GLOVE_NOTION_MCP_URL", "https://mcp.notion.com/mcp")
LINEAR_URL = os.environ.get("GLOVE_LINEAR_MCP_URL", "https://mcp.linear.app/mcp")


def data_dir() -> str:
    """``$GLOVE_HOME``, else ``$XDG_DATA_HOME/glove``, else ``~/.local/share/glove``."""
    explicit = os.environ.get("GLOVE_HOME")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "glove")


def token_store() -> FsOAuthStore:
    """The token file ``glove-mcp auth`` writes (``oauth.json`` in the data directory)."""
    return FsOAuthStore(os.path.join(data_dir(), "oauth.json"))


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
