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
from typing import Any, Literal

__all__ = [
    "McpEvent",
    "McpListChanged",
    "McpListingLimited",
    "McpLog",
    "McpProgress",
    "McpSampling",
    "McpServerActivated",
    "McpServerDeactivated",
    "McpServerFailed",
]


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


@dataclass(frozen=True)
class McpProgress:
    """A server reported progress on a running tool call (``notifications/progress``).

    Attributes:
        server: the catalogue id.
        tool: the server's real tool name.
        call_id: the model's tool-call id (``ToolContext.call_id``), or None for a call made
            outside the agent loop.
        progress: how far it is; grows with every report.
        total: the value ``progress`` reaches when done, if the server knows it.
        message: what it is doing, if the server said.
    """

    kind: Literal["mcp_progress"] = field(default="mcp_progress", init=False)
    server: str
    tool: str
    call_id: str | None
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True)
class McpLog:
    """A server sent a log message (``notifications/message``).

    Attributes:
        server: the catalogue id.
        level: the MCP log level (``"debug"`` … ``"emergency"``).
        logger: the server's logger name, if it gave one.
        data: what it logged (any JSON value).
    """

    kind: Literal["mcp_log"] = field(default="mcp_log", init=False)
    server: str
    level: str
    logger: str | None
    data: Any


@dataclass(frozen=True)
class McpListChanged:
    """A server's tools, prompts or resources changed and were listed again.

    Attributes:
        server: the catalogue id.
        what: ``"tools"``, ``"prompts"`` or ``"resources"``.
        added, removed, changed: the (bridged) names that appeared, went away, or got a new
            description or schema (tools only; empty for prompts and resources).
    """

    kind: Literal["mcp_list_changed"] = field(default="mcp_list_changed", init=False)
    server: str
    what: Literal["tools", "prompts", "resources"]
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpListingLimited:
    """A server's tool listing went over a bound of the mount (``ListingLimits``): the server
    mounted with the tools that fit, and the model was told what was left out. Sent at mount,
    activation and every re-listing that reaches a bound.

    Attributes:
        server: the catalogue id.
        detail: what was left out, naming each bound and its value (what the model reads).
        not_offered: bridged names of listed tools that were not offered (schema or total size).
        cut: bridged names of offered tools whose descriptions were cut.
        more_tools: the server listed more than ``max_tools`` tools.
        held: bridged names of the tools past ``max_tools`` that were held back, not
            offered, but can be loaded on request (``<id>__more_tools``); tools past
            ``max_tools + max_held_tools`` were not read.
    """

    kind: Literal["mcp_listing_limited"] = field(default="mcp_listing_limited", init=False)
    server: str
    detail: str
    not_offered: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()
    more_tools: bool = False
    held: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpSampling:
    """A server's sampling request (``sampling/createMessage``) was answered or refused.

    Attributes:
        server: the catalogue id.
        outcome: ``"answered"``, ``"refused"`` (not allowed, or a person said no) or
            ``"failed"`` (the model failed).
        model: the model adapter's name (None when refused before asking it).
        input_tokens, output_tokens: what the model call cost (0 when none was made).
        detail: why it was refused or failed, if it was.
    """

    kind: Literal["mcp_sampling"] = field(default="mcp_sampling", init=False)
    server: str
    outcome: Literal["answered", "refused", "failed"]
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    detail: str | None = None


McpEvent = (
    McpServerFailed
    | McpServerActivated
    | McpServerDeactivated
    | McpProgress
    | McpLog
    | McpListChanged
    | McpListingLimited
    | McpSampling
)
"""Every event glove_mcp sends to a Glove's subscribers."""
