"""Tool-result summaries: results of earlier user turns sent short (opt in).

A large tool result is read once, in the turn that asked for it; after that it mostly rides
along in every later request. With ``Glove(result_summaries=ResultSummaries())``, a result
older than the last message the user really typed is sent as a summary instead:

- the tool's own, when it gave one (``ToolResultData.summary``);
- else a bounded head and tail of its text, with a note saying it was shortened, how long it
  was, and that calling the tool again gives the full text.

Rules that keep the prompt cache and the conversation whole:

- **At user-turn boundaries only.** The boundary is the last user message the user typed;
  framework messages (runtime context, outside events, inbox) and tool results never count
  as one, so a fresh snapshot or event never shortens the current turn's results. Within a
  user turn the boundary does not move, so every model call sends the same prefix as the one
  before plus new messages: the provider's cache is re-written at most once per user turn
  (at its first call), never within one.
- **Only the text payload.** A summary replaces ``data`` (and a long ``message``, cut the
  same way); every other field of the result — status, media and any other parts in
  ``content``, ``render_data``, ``summary`` itself, fields added later — is copied over
  unchanged.
- **The store keeps the full result.** Summaries are applied while building each model
  request and never written back; an application reading the store, a restart or a
  compaction sees every result in full.
- **Small results are left alone**: below ``ResultSummaries.min_chars``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from glove_core.result_limits import data_text
from glove_core.types import Message, ToolResult, ToolResultData

__all__ = [
    "ResultSummaries",
    "SummaryCache",
    "checked_summaries",
    "is_user_turn",
    "last_user_turn_index",
    "summarize_history",
    "summarize_result",
]

SummaryCache = dict[str, tuple[Message, Message]]
"""Message id -> (the saved message, its summarised form), kept for one request so that each
message is summarised once, not at every model call."""


@dataclass(frozen=True)
class ResultSummaries:
    """Send tool results of earlier user turns as summaries (``Glove(result_summaries=...)``).

    Raises:
        ValueError: a field is not a whole number in its range (the message names the field,
            the value and the range).
    """

    min_chars: int = 2_000
    """Results whose text (``data`` as the model reads it, plus ``message``) is shorter than
    this many characters are always sent whole. Default 2,000 (about 500 tokens)."""
    head_chars: int = 800
    """Characters kept from the start of a shortened text. Default 800."""
    tail_chars: int = 400
    """Characters kept from its end. Default 400. A tool's own summary longer than
    ``head_chars + tail_chars`` is shortened the same way."""

    def __post_init__(self) -> None:
        for name in ("min_chars", "head_chars", "tail_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(
                    f"ResultSummaries.{name} must be a whole number of 0 or more characters, "
                    f"got {value!r}"
                )
        if self.head_chars + self.tail_chars < 1:
            raise ValueError(
                "ResultSummaries.head_chars + tail_chars must be at least 1 character, got "
                f"{self.head_chars} + {self.tail_chars}"
            )
        if self.min_chars <= self.head_chars + self.tail_chars:
            raise ValueError(
                f"ResultSummaries.min_chars ({self.min_chars}) must be more than head_chars + "
                f"tail_chars ({self.head_chars + self.tail_chars}): a shortened result would "
                "be no shorter than one sent whole"
            )

    @property
    def kept_chars(self) -> int:
        """Characters a shortened text keeps (head plus tail)."""
        return self.head_chars + self.tail_chars


def checked_summaries(value: object) -> ResultSummaries | None:
    """``value`` when it is a ``ResultSummaries`` or None (``Glove(result_summaries=)``).

    Raises:
        TypeError: anything else, e.g. ``True`` (the message says what to pass instead).
    """
    if value is None or isinstance(value, ResultSummaries):
        return value
    raise TypeError(
        "result_summaries must be a ResultSummaries or None, got "
        f"{type(value).__name__} {value!r}; pass ResultSummaries() for the defaults"
    )


def is_user_turn(message: Message) -> bool:
    """Whether ``message`` is something the user sent: a user message that is neither a tool
    result, nor a compaction summary, nor written by the framework (runtime context, events,
    inbox). Compaction and summaries share this one rule."""
    return (
        message.sender == "user"
        and message.framework_context is None
        and not message.tool_results
        and not message.is_compaction
    )


def last_user_turn_index(messages: Sequence[Message]) -> int | None:
    """Index of the last message the user actually typed: framework messages (runtime
    context, events, inbox) and tool results never count."""
    for index in range(len(messages) - 1, -1, -1):
        if is_user_turn(messages[index]):
            return index
    return None


def summarize_history(
    messages: Sequence[Message], config: ResultSummaries, cache: SummaryCache | None = None
) -> list[Message]:
    """``messages`` with the tool results before the last user turn summarised (see the
    module docstring); the same message objects where nothing changes.

    Args:
        messages: saved history, oldest first.
        config: the thresholds.
        cache: kept by the caller across calls of one request (see ``SummaryCache``).
    """
    boundary = last_user_turn_index(messages)
    if boundary is None:
        return list(messages)
    out = list(messages)
    for index in range(boundary):
        message = messages[index]
        if not message.tool_results:
            continue
        known = cache.get(message.id) if cache is not None else None
        if known is None or known[0] is not message:
            known = (message, _summarize_message(message, config))
            if cache is not None:
                cache[message.id] = known
        out[index] = known[1]
    return out


def summarize_result(result: ToolResult, config: ResultSummaries) -> ToolResult:
    """``result`` as sent after its user turn: whole when small, else its summary.

    Only ``data`` and ``message`` change; every other field is copied (see the module
    docstring).
    """
    data = result.result
    text = "" if data.data is None else data_text(data.data)
    size = len(text) + len(data.message or "")
    if size < config.min_chars:
        return result
    update: dict[str, Any] = {}
    if data.summary is not None:
        own = _shorten(data.summary, config, None)
        update["data"] = (
            f"[summary given by the tool; the full result ({size:,} characters) was shown "
            f"in an earlier turn — call {result.name} again if you need it]\n{own}"
        )
    elif data.data is not None:
        update["data"] = _shorten(text, config, result.name)
    if data.message is not None and len(data.message) > config.kept_chars:
        update["message"] = _shorten(data.message, config, result.name)
    if not update:
        return result
    return result.model_copy(update={"result": _copy(data, update)})


def _copy(data: ToolResultData, update: dict[str, Any]) -> ToolResultData:
    # model_copy keeps every field not named in update, including ones added later.
    return data.model_copy(update=update)


def _summarize_message(message: Message, config: ResultSummaries) -> Message:
    results = message.tool_results or []
    shortened = [summarize_result(r, config) for r in results]
    if all(new is old for new, old in zip(shortened, results, strict=True)):
        return message
    return message.model_copy(update={"tool_results": shortened})


def _shorten(text: str, config: ResultSummaries, tool: str | None) -> str:
    if len(text) <= config.kept_chars:
        return text
    head = text[: config.head_chars]
    tail = text[len(text) - config.tail_chars :] if config.tail_chars else ""
    omitted = len(text) - len(head) - len(tail)
    note = f"[… shortened: {omitted:,} of {len(text):,} characters left out"
    if tool is not None:
        note += f"; this result is from an earlier turn — call {tool} again if you need it in full"
    return f"{head}\n{note} …]\n{tail}"
