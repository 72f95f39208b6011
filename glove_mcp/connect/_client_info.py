"""``ClientInfo``: how glove_mcp introduces itself to MCP servers."""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass

import mcp_types as types

__all__ = ["ClientInfo"]


@functools.cache
def _package_version() -> str:
    # Cached: reading the installed metadata costs ~0.5 ms, once per connection otherwise.
    try:
        return importlib.metadata.version("glove-agents")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "0"


@dataclass(frozen=True)
class ClientInfo:
    """How this client introduces itself to servers (``initialize`` / ``server/discover``).

    Attributes:
        name: the client's name.
        version: its version; "" for the installed glove package's.
    """

    name: str = "glove"
    version: str = ""

    def to_mcp(self) -> types.Implementation:
        """The SDK's ``Implementation`` model."""
        return types.Implementation(name=self.name, version=self.version or _package_version())
