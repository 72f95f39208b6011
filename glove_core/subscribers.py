"""Subscribers: observers of what an agent does, with one typed payload per event.

A subscriber implements ``async record(event)``. Every event is a frozen dataclass whose
``kind`` is a literal naming it (``TextDelta.kind == "text_delta"``), so a subscriber picks
events by type and the checker knows their fields::

    class Printer:
        async def record(self, event: SubscriberEvent) -> None:
            match event:
                case TextDelta(text=text):
                    print(text, end="")
                case ToolUseResult(name=name, result=result):
                    print(f"\n{name}: {result.status}")

The core's events are listed in ``EventPayload``; other packages define their own (glove_mcp's
``McpServerActivated`` …) and publish them with ``Glove.publish``: the core never needs to know
them. A subscriber that raises is logged and skipped; it never breaks the agent loop.
"""

from __future__ import annotations

import inspect
import logging
import warnings
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
    "Publish",
    "RuntimeContextEvent",
    "SubagentCompleted",
    "SubagentInvoked",
    "Subscriber",
    "SubscriberEvent",
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
]
"""The ``kind`` of every glove_core event (one per type in ``EventPayload``)."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of reply text as it streams in."""

    kind: Literal["text_delta"] = field(default="text_delta", init=False)
    text: str


@dataclass(frozen=True)
class ToolUse:
    """The model asked for a tool call (emitted once the call is complete)."""

    kind: Literal["tool_use"] = field(default="tool_use", init=False)
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ModelResponseEvent:
    """A whole reply from a non-streaming model call."""

    kind: Literal["model_response"] = field(default="model_response", init=False)
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str | None = None


@dataclass(frozen=True)
class ModelResponseCompleteEvent:
    """A streamed reply has finished; carries the assembled reply (the fields of
    ``ModelResponseEvent``)."""

    kind: Literal["model_response_complete"] = field(default="model_response_complete", init=False)
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str | None = None


@dataclass(frozen=True)
class ToolUseResult:
    """A tool call finished (successfully, with an error, or aborted)."""

    kind: Literal["tool_use_result"] = field(default="tool_use_result", init=False)
    call_id: str
    name: str
    input: dict[str, Any]
    result: ToolResultData


@dataclass(frozen=True)
class TokenConsumption:
    """Tokens used by one model call, and the conversation's running total."""

    kind: Literal["token_consumption"] = field(default="token_consumption", init=False)
    usage: Usage
    total: Usage


@dataclass(frozen=True)
class CompactionStart:
    """The conversation is being summarised."""

    kind: Literal["compaction_start"] = field(default="compaction_start", init=False)
    estimated_tokens: int


@dataclass(frozen=True)
class CompactionEnd:
    """The summary was saved; ``fallback`` is True when a deterministic digest replaced it."""

    kind: Literal["compaction_end"] = field(default="compaction_end", init=False)
    summary: str
    fallback: bool = False


@dataclass(frozen=True)
class SubagentInvoked:
    """A subagent started; its own events follow until SubagentCompleted."""

    kind: Literal["subagent_invoked"] = field(default="subagent_invoked", init=False)
    name: str
    prompt: str
    call_id: str


@dataclass(frozen=True)
class SubagentCompleted:
    """A subagent finished; ``status`` tells how."""

    kind: Literal["subagent_completed"] = field(default="subagent_completed", init=False)
    name: str
    call_id: str
    text: str
    status: Literal["success", "error", "aborted"] = "success"


CacheCollapseKind = Literal["ttl_expired", "compacted", "summaries", "unexpected"]
"""Why a call read far less from the prompt cache than the conversation had established."""


@dataclass(frozen=True)
class CacheCollapse:
    """A model call read back far less of the prompt cache than the conversation had built.

    ``cause`` says why: ``ttl_expired`` (idle longer than the cache TTL), ``compacted`` (a
    compaction rewrote history since the last call), ``summaries`` (a new user turn: the
    previous turn's tool results are now sent as summaries, ``Glove(result_summaries=)``; once
    per user turn, expected) or ``unexpected`` (the cached prefix moved: a bug to fix —
    ``detail`` names what changed when the adapter can tell).
    """

    kind: Literal["cache_collapse"] = field(default="cache_collapse", init=False)
    cause: CacheCollapseKind
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

    kind: Literal["runtime_context"] = field(default="runtime_context", init=False)
    delivery: Literal["iteration", "request", "history", "all"]
    snapshots: list[tuple[str, str]]
    """``(provider name, rendered text)`` pairs, in registration order; empty values omitted."""


@dataclass(frozen=True)
class EventReceived:
    """``emit_event`` took an event, and what it did with it."""

    kind: Literal["event_received"] = field(default="event_received", init=False)
    id: str
    source: str
    event_kind: str
    """The outside event's own kind, as given to ``emit_event`` (e.g. ``"build.finished"``)."""
    disposition: Literal["queued", "woke", "deferred", "dropped", "duplicate"]


@dataclass(frozen=True)
class EventInjected:
    """Events were saved into the conversation: after a tool step, before a request's
    message, or as the message of a wake-up turn."""

    kind: Literal["event_injected"] = field(default="event_injected", init=False)
    ids: list[str]
    where: Literal["tool_step", "request", "wake"]


@dataclass(frozen=True)
class EventDropped:
    """An event was dropped without reaching the model."""

    kind: Literal["event_dropped"] = field(default="event_dropped", init=False)
    id: str
    reason: Literal["expired"]


@dataclass(frozen=True)
class EventWakeFailed:
    """A wake-up turn failed. Its events are not lost: they were saved as the turn's message
    (or stay queued if the turn failed before that), so the next turn sees them."""

    kind: Literal["event_wake_failed"] = field(default="event_wake_failed", init=False)
    ids: list[str]
    error: str


EventPayload = (
    TextDelta
    | ToolUse
    | ModelResponseEvent
    | ModelResponseCompleteEvent
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
"""Every event glove_core sends. Other packages send their own event types as well (glove_mcp's
``McpServerFailed``, ``McpServerActivated``, ``McpServerDeactivated``), so a subscriber takes
any ``SubscriberEvent`` and ignores the kinds it does not know."""


class SubscriberEvent(Protocol):
    """What every subscriber event has: a ``kind`` naming it. Each event type is a frozen
    dataclass whose ``kind`` is a ``Literal``; match on the type to read its fields."""

    @property
    def kind(self) -> str:
        """The event's name, e.g. ``"text_delta"``; unique per event type."""
        ...


@runtime_checkable
class Subscriber(Protocol):
    """Receives every event of the Glove it is added to.

    Example:
        >>> class Tokens:
        ...     async def record(self, event: SubscriberEvent) -> None:
        ...         if isinstance(event, TokenConsumption):
        ...             print(event.total.input_tokens)
    """

    async def record(self, event: SubscriberEvent) -> None:
        """Handle one event: a glove_core ``EventPayload`` or another package's event type."""
        ...


Notify = Callable[[EventPayload], Awaitable[None]]
"""How a model adapter reports streaming events to the loop: ``await notify(TextDelta(...))``."""

Publish = Callable[[SubscriberEvent], Awaitable[None]]
"""Sends one event to a Glove's subscribers (``Glove.publish``)."""


class _TwoArgumentSubscriber:
    """Adapts a subscriber written for ``record(event_type, data)`` (before events were typed)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    async def record(self, event: SubscriberEvent) -> None:
        await self.wrapped.record(event.kind, event)

    def __repr__(self) -> str:
        return repr(self.wrapped)


def _takes_event_type(subscriber: Subscriber) -> bool:
    try:
        parameters = inspect.signature(subscriber.record).parameters.values()
    except (AttributeError, TypeError, ValueError):
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(positional) >= 2


class SubscriberSet:
    """The subscribers of one Glove, with error isolation."""

    def __init__(self) -> None:
        self._members: list[Subscriber] = []

    @property
    def active(self) -> bool:
        """Whether anyone subscribes (cheaper than ``members``: the loop asks it per event)."""
        return bool(self._members)

    @property
    def members(self) -> list[Subscriber]:
        """The subscribers, in the order they were added (as they were given)."""
        return [m.wrapped if isinstance(m, _TwoArgumentSubscriber) else m for m in self._members]

    def add(self, subscriber: Subscriber) -> None:
        """Add ``subscriber`` unless it is already there.

        A subscriber whose ``record`` still takes ``(event_type, data)`` keeps working, with a
        ``DeprecationWarning``: it receives ``(event.kind, event)``.
        """
        if subscriber in self.members:
            return
        if _takes_event_type(subscriber):
            warnings.warn(
                f"{subscriber!r}: record(event_type, data) is deprecated; subscribers now "
                "take one typed event, record(event), whose .kind is the old event_type",
                DeprecationWarning,
                stacklevel=3,
            )
            self._members.append(_TwoArgumentSubscriber(subscriber))
        else:
            self._members.append(subscriber)

    def remove(self, subscriber: Subscriber) -> None:
        """Remove ``subscriber``; one that is not there is ignored."""
        for member in list(self._members):
            given = member.wrapped if isinstance(member, _TwoArgumentSubscriber) else member
            if given is subscriber or given == subscriber:
                self._members.remove(member)
                return

    async def publish(self, event: SubscriberEvent) -> None:
        """Deliver ``event`` to every subscriber; one that raises is logged and skipped."""
        if not self._members:
            return
        for subscriber in list(self._members):
            try:
                await subscriber.record(event)
            except Exception:
                logger.exception(
                    "subscriber %r raised on %r; the agent continues", subscriber, event.kind
                )
