"""RequestResult: what ``Glove.process_request`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from glove_core.types import Message, Usage

__all__ = ["RequestResult", "StopReason"]

StopReason = Literal["end_turn", "max_turns"]


@dataclass
class RequestResult:
    """What ``process_request`` returns."""

    text: str
    """The final agent text (of the last reply)."""
    messages: list[Message] = field(default_factory=list)
    """Every message this request saved, in order."""
    usage: Usage = field(default_factory=Usage)
    """Tokens used by this request's model calls."""
    stop_reason: StopReason = "end_turn"
    """``end_turn`` when the model answered without tool calls, ``max_turns`` when the loop hit
    ``max_turns`` model calls first."""
