"""The model adapter protocol and the request/response records it exchanges with the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from glove_core.abort import AbortSignal
from glove_core.subscribers import Notify
from glove_core.tools import ToolSpec
from glove_core.types import Message, Usage

__all__ = ["ModelAdapter", "ModelRequest", "ModelResponse"]


@dataclass
class ModelRequest:
    """Everything one model call sends.

    ``messages`` are in order: saved history first, then transient messages (runtime context
    that is never saved). ``saved_count`` is how many leading messages are saved history; a
    caching adapter places its conversation breakpoint on the last of those, never on a
    transient one.
    """

    system: str
    tools: list[ToolSpec]
    messages: list[Message]
    saved_count: int = -1

    def __post_init__(self) -> None:
        if self.saved_count < 0:
            self.saved_count = len(self.messages)


@dataclass
class ModelResponse:
    """One reply: an agent message (text and/or tool calls) and its token usage."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None


@runtime_checkable
class ModelAdapter(Protocol):
    """Turns a ModelRequest into a reply.

    Adapters report streaming progress through ``notify``: ``text_delta`` as text arrives,
    ``tool_use`` when a tool call is complete, then ``model_response_complete`` (streaming) or
    ``model_response`` (not streaming). They stop promptly when ``signal`` fires.
    """

    @property
    def name(self) -> str:
        """A short name for logs, e.g. ``anthropic:claude-sonnet-4-5``."""
        ...

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        """Make one model call."""
        ...
