"""Where glove keeps its files when nobody says otherwise: the same places the ``glove-mcp``
command uses, so a program and the command share logins, catalogue and conversations.

- the data directory: ``$GLOVE_HOME``, else ``$XDG_DATA_HOME/glove``, else
  ``~/.local/share/glove``;
- ``oauth.json`` in it: the OAuth tokens (``FsOAuthStore``; ``glove-mcp auth`` writes it);
- the configuration directory: ``$XDG_CONFIG_HOME/glove``, else ``~/.config/glove``;
- ``servers.toml`` in it: the catalogue (``glove-mcp servers add`` writes it; the command
  moves one an earlier version left in the data directory, once).

Only ``os`` is imported: the command reads these paths before anything heavy loads.
"""

from __future__ import annotations

import os

__all__ = [
    "CATALOGUE_FILE",
    "TOKEN_FILE",
    "catalogue_file",
    "config_dir",
    "data_dir",
    "token_file",
]

TOKEN_FILE = "oauth.json"
"""The token file's name in the data directory."""

CATALOGUE_FILE = "servers.toml"
"""The catalogue file's name in the configuration directory."""


def data_dir() -> str:
    """``$GLOVE_HOME``, else ``$XDG_DATA_HOME/glove``, else ``~/.local/share/glove``."""
    explicit = os.environ.get("GLOVE_HOME")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "glove")


def token_file() -> str:
    """The default OAuth token file: ``oauth.json`` in the data directory."""
    return os.path.join(data_dir(), TOKEN_FILE)


def config_dir() -> str:
    """``$XDG_CONFIG_HOME/glove``, else ``~/.config/glove``: where the catalogue lives."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "glove")


def catalogue_file() -> str:
    """The default catalogue: ``servers.toml`` in the configuration directory (used when it
    exists)."""
    return os.path.join(config_dir(), CATALOGUE_FILE)
