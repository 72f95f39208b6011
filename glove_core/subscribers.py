"""Subscribers: observers of what an agent does, with one typed payload per event.

A subscriber implements ``async record(event_type, data)``. A subscriber that raises is logged
and skipped; it never breaks the agent loop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from glove_core.types import ToolCall, ToolResultData, Usage

__all__ = [
    "CacheCollapse",
    "CacheCollapseKind",
    "CompactionEnd",
    "CompactionStart",
    "EventDropped",
    "EventInjected",
    "EventPayload",
    "EventReceived",
    "EventType",
    "EventWakeFailed",
    "ModelResponseCompleteEvent",
    "ModelResponseEvent",
    "Notify",
    "RuntimeContextEvent",
    "SubagentCompleted",
    "SubagentInvoked",
    "Subscriber",
    "SubscriberSet",
    "TextDelta",
    "TokenConsumption",
    "ToolUse",
    "ToolUseResult",
]

logger = logging.getLogger(__name__)

EventType = Literal[
    "text_delta",
    "tool_use",
    "model_response",
    "model_response_complete",
    "tool_use_result",
    "token_consumption",
    "compaction_start",
    "compaction_end",
    "subagent_invoked",
    "subagent_completed",
    "cache_collapse",
    "runtime_context",
    "event_received",
    "event_injected",
    "event_dropped",
    "event_wake_failed",
    "mcp_server_failed",
    "mcp_server_activated",
    "mcp_server_deactivated",
]


@dataclass(frozen=True)
class TextDelta:
    """A piece of reply text as it streams in."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """The model asked for a tool call (emitted once the call is complete)."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ModelResponseEvent:
    """A whole reply from a non-streaming model call."""

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str | None = None


@dataclass(frozen=True)
class ModelResponseCompleteEvent(ModelResponseEvent):
    """A streamed reply has finished; carries the assembled reply."""


@dataclass(frozen=True)
class ToolUseResult:
    """A tool call finished (successfully, with an error, or aborted)."""

    call_id: str
    name: str
    input: dict[str, Any]
    result: ToolResultData


@dataclass(frozen=True)
class TokenConsumption:
    """Tokens used by one model call, and the conversation's running total."""

    usage: Usage
    total: Usage


@dataclass(frozen=True)
class CompactionStart:
    """The conversation is being summarised."""

    estimated_tokens: int


@dataclass(frozen=True)
class CompactionEnd:
    """The summary was saved; ``fallback`` is True when a deterministic digest replaced it."""

    summary: str
    fallback: bool = False


@dataclass(frozen=True)
class SubagentInvoked:
    """A subagent started; its own events follow until SubagentCompleted."""

    name: str
    prompt: str
    call_id: str


@dataclass(frozen=True)
class SubagentCompleted:
    """A subagent finished; ``status`` tells how."""

    name: str
    call_id: str
    text: str
    status: Literal["success", "error", "aborted"] = "success"


CacheCollapseKind = Literal["ttl_expired", "compacted", "unexpected"]
"""Why a call read far less from the prompt cache than the conversation had established."""


@dataclass(frozen=True)
class CacheCollapse:
    """A model call read back far less of the prompt cache than the conversation had built.

    ``kind`` says why: ``ttl_expired`` (idle longer than the cache TTL), ``compacted`` (a
    compaction rewrote history since the last call) or ``unexpected`` (the cached prefix
    moved: a bug to fix — ``detail`` names what changed when the adapter can tell).
    """

    kind: CacheCollapseKind
    model: str
    established_tokens: int
    """Prefix tokens the previous call had read or written (what this call should read)."""
    read_tokens: int
    """What this call read from the cache."""
    idle_seconds: float
    """Time since the previous call of the conversation."""
    detail: str = ""

    @property
    def missed_tokens(self) -> int:
        """Established prefix tokens this call did not read back."""
        return max(0, self.established_tokens - self.read_tokens)


@dataclass(frozen=True)
class RuntimeContextEvent:
    """Runtime context was resolved for ``delivery`` (media replaced by placeholders)."""

    delivery: Literal["iteration", "request", "history", "all"]
    snapshots: list[tuple[str, str]]
    """``(provider name, rendered text)`` pairs, in registration order; empty values omitted."""


@dataclass(frozen=True)
class EventReceived:
    """``emit_event`` took an event, and what it did with it."""

    id: str
    source: str
    kind: str
    disposition: Literal["queued", "woke", "deferred", "dropped", "duplicate"]


@dataclass(frozen=True)
class EventInjected:
    """Events were saved into the conversation: after a tool step, before a request's
    message, or as the message of a wake-up turn."""

    ids: list[str]
    where: Literal["tool_step", "request", "wake"]


@dataclass(frozen=True)
class EventDropped:
    """An event was dropped without reaching the model."""

    id: str
    reason: Literal["expired"]


@dataclass(frozen=True)
class EventWakeFailed:
    """A wake-up turn failed. Its events are not lost: they were saved as the turn's message
    (or stay queued if the turn failed before that), so the next turn sees them."""

    ids: list[str]
    error: str


EventPayload = (
    TextDelta
    | ToolUse
    | ModelResponseEvent
    | ToolUseResult
    | TokenConsumption
    | CompactionStart
    | CompactionEnd
    | SubagentInvoked
    | SubagentCompleted
    | CacheCollapse
    | RuntimeContextEvent
    | EventReceived
    | EventInjected
    | EventDropped
    | EventWakeFailed
)
"""Any glove_core event payload. glove_mcp sends its own payloads (``McpServerFailed``,
``McpServerActivated``, ``McpServerDeactivated``) under the ``mcp_server_*`` names."""


@runtime_checkable
class Subscriber(Protocol):
    """Receives every event of the Glove it is added to."""

    async def record(self, event_type: str, data: Any) -> None:
        """Handle one event. ``data`` is the payload dataclass that belongs to ``event_type``."""
        ...


Notify = Callable[[EventType, EventPayload], Awaitable[None]]
"""How a model adapter reports streaming events to the loop."""


@dataclass
class SubscriberSet:
    """The subscribers of one Glove, with error isolation."""

    members: list[Subscriber] = field(default_factory=list)

    def add(self, subscriber: Subscriber) -> None:
        if subscriber not in self.members:
            self.members.append(subscriber)

    def remove(self, subscriber: Subscriber) -> None:
        if subscriber in self.members:
            self.members.remove(subscriber)

    async def emit(self, event_type: str, data: Any) -> None:
        """Deliver an event to every subscriber; one that raises is logged and skipped."""
        for subscriber in list(self.members):
            try:
                await subscriber.record(event_type, data)
            except Exception:
                logger.exception(
                    "subscriber %r raised on %r; the agent continues", subscriber, event_type
                )
