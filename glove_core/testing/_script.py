"""What a fake model API answers: scripted replies and injected failures."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FakeDrop",
    "FakeError",
    "FakeItem",
    "FakeReply",
    "FakeStall",
    "FakeToolUse",
    "Responder",
    "as_reply",
]


@dataclass(frozen=True)
class FakeToolUse:
    """A tool call block in a scripted reply; ``id`` is generated when omitted."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class FakeReply:
    """A whole scripted reply: text and tool-call blocks in order.

    ``stop_reason`` defaults to ``tool_use`` when a tool is called, else ``end_turn``.
    """

    blocks: tuple[str | FakeToolUse, ...]
    stop_reason: str | None = None

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(b, FakeToolUse) for b in self.blocks):
            return "tool_use"
        return "end_turn"


@dataclass(frozen=True)
class FakeError:
    """Answer with an HTTP error instead of a reply.

    Args:
        status: 400, 429, 500, 529, …
        message: the API's ``error.message``; a default that names the status when omitted.
        retry_after: seconds for the ``retry-after`` header (fractions allowed), or None.
        error_type: the API's ``error.type``; derived from ``status`` when omitted.
    """

    status: int
    message: str | None = None
    retry_after: float | None = None
    error_type: str | None = None


@dataclass(frozen=True)
class FakeDrop:
    """Start streaming ``reply`` and drop the connection after ``after_events`` SSE frames.

    For a non-streaming request the connection drops after half of the JSON body.
    """

    reply: FakeReply = field(default_factory=lambda: FakeReply(("partial reply text",)))
    after_events: int = 4


@dataclass(frozen=True)
class FakeStall:
    """Stream ``text`` and then hang until the client goes away (to test aborts).

    ``started`` is set once the text has been sent; ``disconnected`` once the client closed the
    connection (an aborted stream).
    """

    text: str = "thinking"
    started: asyncio.Event = field(default_factory=asyncio.Event, compare=False)
    disconnected: asyncio.Event = field(default_factory=asyncio.Event, compare=False)


FakeItem = (
    str | FakeToolUse | FakeReply | FakeError | FakeDrop | FakeStall | list[str | FakeToolUse]
)
"""One scripted answer: text, a tool call, a list of blocks, a whole reply or a failure."""

Responder = Callable[[dict[str, Any]], FakeItem]
"""Builds an answer from the request body when the script is empty."""


def as_reply(item: str | FakeToolUse | FakeReply | list[str | FakeToolUse]) -> FakeReply:
    """Normalise a reply-like script item into a FakeReply."""
    if isinstance(item, FakeReply):
        return item
    if isinstance(item, list):
        return FakeReply(tuple(item))
    return FakeReply((item,))
