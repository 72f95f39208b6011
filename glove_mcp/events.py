"""Subscriber events of glove_mcp. The core does not know them: a mount sends them with
``Glove.publish``, and a subscriber matches on their types like on the core's.

Example:
    >>> class ServerLog:
    ...     async def record(self, event: SubscriberEvent) -> None:
    ...         if isinstance(event, McpServerFailed):
    ...             print(f"{event.server} failed at {event.phase}: {event.error}")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["McpEvent", "McpServerActivated", "McpServerDeactivated", "McpServerFailed"]


@dataclass(frozen=True)
class McpServerFailed:
    """A server could not be loaded.

    Attributes:
        server: the catalogue id.
        phase: ``"reload"`` (at mount) or ``"activate"``.
        error: the error message (never contains credentials).
    """

    kind: Literal["mcp_server_failed"] = field(default="mcp_server_failed", init=False)
    server: str
    phase: Literal["reload", "activate"]
    error: str


@dataclass(frozen=True)
class McpServerActivated:
    """A server's tools were loaded and are offered to the model."""

    kind: Literal["mcp_server_activated"] = field(default="mcp_server_activated", init=False)
    server: str
    tools: tuple[str, ...]


@dataclass(frozen=True)
class McpServerDeactivated:
    """A server's tools were switched off and its connection closed."""

    kind: Literal["mcp_server_deactivated"] = field(default="mcp_server_deactivated", init=False)
    server: str
    tools: tuple[str, ...]


McpEvent = McpServerFailed | McpServerActivated | McpServerDeactivated
"""Every event glove_mcp sends to a Glove's subscribers."""
