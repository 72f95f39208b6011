"""Compaction: replace a long conversation's visible history with a summary.

Before each model call the loop asks ``maybe_compact`` whether the call would be too big. The
size is what the *next* call would send — the last call's reported prompt tokens plus an
estimate of what was appended since — not a running sum of every call (which grows
quadratically and fires far too early).

A compaction saves one user message with ``is_compaction=True``. The store keeps everything;
the model sees history from the last summary on. The summary holds, in order: earlier summaries
carried verbatim (never re-summarised), the new summary (written by the model, or a
deterministic digest when that call fails), the current task list, the pending inbox items,
and the last few messages verbatim. Tool calls and results only ever appear inside the
summary's text, so no tool_use is separated from its tool_result.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from glove_core.abort import AbortError, AbortSignal
from glove_core.builtin.inbox import SaveMessages, format_pending_inbox
from glove_core.builtin.tasks import format_tasks
from glove_core.context_items import disabled_tools, is_restatement, restate_switched_off
from glove_core.models.base import ModelAdapter, ModelRequest
from glove_core.result_summaries import is_user_turn
from glove_core.stores.base import InboxStore, StoreAdapter, TaskStore, has_capability
from glove_core.subscribers import (
    CompactionEnd,
    CompactionStart,
    EventPayload,
    SubscriberEvent,
)
from glove_core.tools import Tool
from glove_core.tracing import internal_span
from glove_core.types import DocumentPart, ImagePart, Message, TextPart, ToolCall, Usage

__all__ = [
    "DEFAULT_COMPACTION_INSTRUCTIONS",
    "CompactionConfig",
    "CompactionHost",
    "compact",
    "estimate_message_tokens",
    "maybe_compact",
    "next_call_tokens",
]

logger = logging.getLogger(__name__)

DEFAULT_COMPACTION_INSTRUCTIONS = (
    "You compact conversations between a user and an AI assistant. Summarise the transcript "
    "you are given so the assistant can continue the work without it. Keep the user's goals, "
    "constraints and preferences; decisions made; facts learned (names, ids, paths, numbers, "
    "URLs); what each tool call achieved or why it failed; open questions; and the next step. "
    "Write short paragraphs and lists, no preamble."
)
"""The summary model call's system prompt when ``CompactionConfig.instructions`` is not given."""

_MEDIA_TOKENS = 1_600
_TRANSCRIPT_SHARE = 0.75  # of the context window, left for the summary call's transcript
_TAG_RE = re.compile(
    r"<(/?)(conversation_summary|earlier_summary|summary|task_list|pending_inbox|recent_messages)>"
)
_BLOCK_RE = re.compile(r"<(earlier_summary|summary)>\n(.*?)\n</\1>", re.DOTALL)


@dataclass(frozen=True)
class CompactionConfig:
    """When and how a Glove compacts its conversation (``Glove(compaction=...)``).

    Raises:
        ValueError: a field is out of range (the message names the field, value and range).
    """

    instructions: str = DEFAULT_COMPACTION_INSTRUCTIONS
    """System prompt of the summary model call. Default: ``DEFAULT_COMPACTION_INSTRUCTIONS``."""
    context_limit: int = 100_000
    """The model's context size, in tokens. Default 100,000."""
    threshold: float = 0.9
    """Fraction of ``context_limit`` (0 < threshold ≤ 1) at which the next call triggers a
    compaction. Default 0.9."""
    keep_last: int = 6
    """Messages at the end of the conversation copied verbatim into the summary (moved earlier
    when needed so a tool call stays with its result). Default 6 messages."""
    max_verbatim_chars: int = 4_000
    """Longest piece of text, in characters, copied from one message into the summary or the
    summary call's transcript; longer pieces keep their start and end. Default 4,000."""
    chars_per_token: float = 4.0
    """Characters per token when estimating messages the model has not counted yet. Default
    4.0."""

    def __post_init__(self) -> None:
        if not self.instructions.strip():
            raise ValueError("CompactionConfig.instructions must not be empty")
        _check("context_limit", self.context_limit, 1_000, None, "at least 1,000 tokens")
        if not 0 < self.threshold <= 1:
            raise ValueError(
                f"CompactionConfig.threshold must be a fraction in (0, 1], got {self.threshold}"
            )
        _check("keep_last", self.keep_last, 0, 200, "between 0 and 200 messages")
        _check("max_verbatim_chars", self.max_verbatim_chars, 200, None, "at least 200")
        if not 0.5 <= self.chars_per_token <= 20:
            raise ValueError(
                "CompactionConfig.chars_per_token must be between 0.5 and 20, got "
                f"{self.chars_per_token}"
            )

    @property
    def trigger_tokens(self) -> int:
        """The next-call size, in tokens, from which a compaction runs."""
        return int(self.context_limit * self.threshold)


def _check(name: str, value: int, low: int, high: int | None, allowed: str) -> None:
    if value < low or (high is not None and value > high):
        raise ValueError(f"CompactionConfig.{name} must be {allowed}, got {value}")


# --- sizing ----------------------------------------------------------------------------------


def estimate_message_tokens(messages: Sequence[Message], chars_per_token: float = 4.0) -> int:
    """A rough token count of messages: characters / ``chars_per_token``, plus a fixed
    allowance per image or document."""
    chars = 0
    media = 0
    for m in messages:
        chars += len(m.text)
        for part in m.content or []:
            if isinstance(part, TextPart):
                chars += len(part.text) if part.text != m.text else 0
            else:
                media += 1
        for call in m.tool_calls or []:
            chars += len(call.name) + len(_json(call.input))
        for result in m.tool_results or []:
            data = result.result
            chars += len(result.name) + len(data.message or "") + len(_json(data.data))
            media += len(data.content or [])
    return int(chars / chars_per_token) + media * _MEDIA_TOKENS


def next_call_tokens(
    last_usage: Usage | None,
    appended_since: Sequence[Message],
    chars_per_token: float = 4.0,
) -> int | None:
    """The size of the next model call: the last call's whole prompt (input + cache read +
    cache write tokens) plus an estimate of ``appended_since``; None without a last call."""
    if last_usage is None:
        return None
    prompt = last_usage.input_tokens + last_usage.cache_read_tokens + last_usage.cache_write_tokens
    return prompt + estimate_message_tokens(appended_since, chars_per_token)


# --- entry points ----------------------------------------------------------------------------


class CompactionHost(Protocol):
    """What compaction reads of the agent. A ``Glove`` is one; so is the loop's request."""

    @property
    def model(self) -> ModelAdapter:
        """Writes the summary."""
        ...

    @property
    def store(self) -> StoreAdapter:
        """Receives the summary and the summary call's usage."""
        ...

    @property
    def system_prompt(self) -> str:
        """Counted when the next call's size is estimated."""
        ...

    @property
    def tools(self) -> Sequence[Tool]:
        """Counted when the next call's size is estimated."""
        ...

    async def publish(self, event: SubscriberEvent) -> None:
        """Receives ``compaction_start`` and ``compaction_end``."""
        ...


async def maybe_compact(
    glove: CompactionHost,
    config: CompactionConfig,
    history: Sequence[Message],
    last_usage: Usage | None,
    appended_since: Sequence[Message],
    signal: AbortSignal | None = None,
    save: SaveMessages | None = None,
    *,
    as_sent: Sequence[Message] | None = None,
) -> list[Message] | None:
    """Compact when the next model call would reach ``config.trigger_tokens``.

    Call it before every model call, with the saved history that call would send.

    Args:
        glove: the agent (its model writes the summary; its store receives it): a ``Glove``
            or any ``CompactionHost``.
        config: the compaction settings.
        history: the visible saved history (from the last summary on) the next call sends.
        last_usage: the usage reported by the previous model call of this conversation in this
            process, or None (first call after a start or a compaction): then the system prompt,
            tools and ``history`` are estimated instead.
        appended_since: the messages added to ``history`` since that call (its reply, tool
            results, an inbox message, the next user message); ignored when ``last_usage`` is
            None.
        signal: aborts the summary call; nothing is saved then.
        save: how to save the summary (the loop passes its own bookkeeping save);
            ``glove.store.append_messages`` when omitted.
        as_sent: ``history`` as the next call really sends it (tool results of earlier user
            turns summarised, see ``glove_core.result_summaries``), for estimating its size
            when ``last_usage`` is None; ``history`` when omitted. The summary itself is
            always written from ``history``: compaction reads every result in full.

    Returns:
        None when no compaction ran; otherwise the new visible history to send instead of
        ``history``: the saved summary message, followed by a framework message restating
        the tools switched off when any are.

    Raises:
        AbortError: ``signal`` fired during the summary call. Nothing was saved.
    """
    size = next_call_tokens(last_usage, appended_since, config.chars_per_token)
    if size is None:
        sent = history if as_sent is None else as_sent
        size = _estimate_request(glove, sent, config.chars_per_token)
    if size < config.trigger_tokens or not _compactable(history):
        return None
    logger.info(
        "compacting conversation %r: next call ~%d tokens, trigger %d",
        glove.store.identifier,
        size,
        config.trigger_tokens,
    )
    return await compact(glove, config, history, signal=signal, estimated_tokens=size, save=save)


async def compact(
    glove: CompactionHost,
    config: CompactionConfig,
    history: Sequence[Message],
    *,
    signal: AbortSignal | None = None,
    estimated_tokens: int = 0,
    save: SaveMessages | None = None,
) -> list[Message]:
    """Summarise ``history`` now and save the summary; see ``maybe_compact``.

    Raises:
        ValueError: ``history`` ends with tool calls still waiting for their results, or holds
            nothing since the last summary.
        AbortError: ``signal`` fired during the summary call. Nothing was saved.
    """
    if not _compactable(history):
        raise ValueError(
            "cannot compact this history: it holds nothing since the last summary, or it ends "
            "with tool calls that have no results yet (compact before the next model call)"
        )
    with internal_span(
        "compaction",
        {"gen_ai.conversation.id": glove.store.identifier, "glove.messages": len(history)},
    ):
        return await _compact(glove, config, history, signal, estimated_tokens, save)


async def _compact(
    glove: CompactionHost,
    config: CompactionConfig,
    history: Sequence[Message],
    signal: AbortSignal | None,
    estimated_tokens: int,
    save: SaveMessages | None,
) -> list[Message]:
    previous, rest = _split(history)
    await glove.publish(CompactionStart(estimated_tokens))
    store = glove.store
    tasks = await store.get_tasks() if isinstance(store, TaskStore) else []
    inbox = await store.get_inbox_items() if has_capability(store, InboxStore) else []
    tail = _tail(rest, config.keep_last)
    summary = await _summarise(glove, config, rest, signal)
    fallback = summary is None
    if summary is None:
        summary = _digest(rest, tail, config.max_verbatim_chars)
    sections = [
        "The conversation so far was compacted to save context: this summary replaces the "
        "earlier messages (they are kept in the store). Continue from here."
    ]
    sections.extend(_block("earlier_summary", text) for text in _carried(previous))
    sections.append(_block("summary", _neutralise(summary.strip())))
    if tasks:
        sections.append(_block("task_list", _neutralise(format_tasks(tasks))))
    pending = format_pending_inbox(inbox)
    if pending:
        sections.append(_block("pending_inbox", _neutralise(pending)))
    if tail:
        recent = "\n".join(_render(m, config.max_verbatim_chars) for m in tail)
        sections.append(_block("recent_messages", _neutralise(recent)))
    text = "<conversation_summary>\n" + "\n".join(sections) + "\n</conversation_summary>"
    message = Message(sender="user", text=text, is_compaction=True)
    # Tools switched off before the summary stay off: the switch is restated after it, in the
    # same write, because a request reads only the history from the last summary on.
    restated = restate_switched_off(disabled_tools(history))
    saved = [message] if restated is None else [message, restated]
    await (save or store.append_messages)(saved)
    await glove.publish(CompactionEnd(summary=text, fallback=fallback))
    return saved


# --- internals -------------------------------------------------------------------------------


async def _ignore(event: EventPayload) -> None:
    # The summary call's deltas are not a reply: nothing should stream or speak them.
    return None


async def _summarise(
    glove: CompactionHost,
    config: CompactionConfig,
    rest: Sequence[Message],
    signal: AbortSignal | None,
) -> str | None:
    transcript = "\n".join(_render(m, config.max_verbatim_chars) for m in rest)
    # The summary call must fit the context window itself: keep the transcript's start and end.
    budget = int(config.context_limit * config.chars_per_token * _TRANSCRIPT_SHARE)
    transcript = _clip(transcript, budget)
    request = ModelRequest(
        system=config.instructions,
        tools=[],
        messages=[
            Message(
                sender="user",
                text=f"<transcript>\n{transcript}\n</transcript>\n\nSummarise this transcript.",
            )
        ],
    )
    try:
        call = glove.model.prompt(request, _ignore, signal)
        response = await (signal.race(call) if signal is not None else call)
    except AbortError:
        raise
    except Exception as exc:
        logger.warning(
            "the summary model call failed (%s: %s); using a deterministic digest",
            type(exc).__name__,
            exc,
        )
        return None
    await glove.store.add_usage(response.usage)
    text = response.message.text.strip()
    if not text:
        logger.warning("the summary model call returned no text; using a deterministic digest")
        return None
    return text


def _digest(rest: Sequence[Message], tail: Sequence[Message], max_chars: int) -> str:
    lines = [
        "(The summary model call failed; this is a mechanical digest of the compacted messages.)"
    ]
    first = next((m for m in rest if is_user_turn(m)), None)
    if first is not None:
        lines.append(f"First user request: {_clip(first.text, max_chars)}")
    statuses: dict[str, str] = {}
    for m in rest:
        for r in m.tool_results or []:
            statuses[r.call_id] = r.result.status
    runs: list[tuple[str, str, int]] = []
    for m in rest:
        for call in m.tool_calls or []:
            status = statuses.get(call.id, "no result")
            if runs and runs[-1][:2] == (call.name, status):
                runs[-1] = (call.name, status, runs[-1][2] + 1)
            else:
                runs.append((call.name, status, 1))
    if runs:
        lines.append("Tool calls, in order:")
        lines.extend(f"- {n}: {s}" + (f" (x{k})" if k > 1 else "") for n, s, k in runs)
    shown = len(tail) + (1 if first is not None and first not in tail else 0)
    lines.append(
        f"{len(rest) - shown} message(s) are not reproduced here (still in the store); the "
        "last ones follow verbatim under recent_messages."
    )
    return "\n".join(lines)


def _compactable(history: Sequence[Message]) -> bool:
    _, rest = _split(history)
    if len(rest) < 2:
        return False
    last = rest[-1]
    return not (last.sender == "agent" and last.tool_calls)


def _split(history: Sequence[Message]) -> tuple[Message | None, list[Message]]:
    for index in range(len(history) - 1, -1, -1):
        if history[index].is_compaction:
            rest = list(history[index + 1 :])
            # The tools restated as off just after the summary are not new conversation.
            if rest and is_restatement(rest[0]):
                rest = rest[1:]
            return history[index], rest
    return None, list(history)


def _tail(rest: Sequence[Message], keep_last: int) -> list[Message]:
    if keep_last == 0:
        return []
    start = max(0, len(rest) - keep_last)
    # A results message needs the reply that made the calls.
    while start > 0 and rest[start].tool_results:
        start -= 1
    return list(rest[start:])


def _carried(previous: Message | None) -> list[str]:
    if previous is None:
        return []
    blocks = [body for _, body in _BLOCK_RE.findall(previous.text)]
    return blocks if blocks else [_neutralise(previous.text)]


def _block(tag: str, body: str) -> str:
    return f"<{tag}>\n{body}\n</{tag}>"


def _neutralise(text: str) -> str:
    # Our own tags inside content would confuse the next compaction's parsing.
    return _TAG_RE.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}>", text)


def _clip(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return f"{text[:half]}[… {len(text) - 2 * half} characters omitted …]{text[-half:]}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _render(m: Message, max_chars: int) -> str:
    who = m.sender if m.framework_context is None else f"{m.sender} ({m.framework_context})"
    lines: list[str] = []
    if m.tool_results:
        for r in m.tool_results:
            data = r.result
            body = data.message if data.data is None else _json(data.data)
            if data.message and data.data is not None:
                body = f"{data.message} {body}"
            lines.append(
                f"[tool result {r.name} {r.call_id}: {data.status}] {_clip(body or '', max_chars)}"
            )
        return "\n".join(lines)
    if m.text:
        lines.append(f"[{who}] {_clip(m.text, max_chars)}")
    for part in m.content or []:
        if isinstance(part, ImagePart):
            lines.append(f"[{who} attached an image ({part.media_type})]")
        elif isinstance(part, DocumentPart):
            lines.append(f"[{who} attached a document {part.title or ''} ({part.media_type})]")
    lines.extend(_render_call(c, max_chars) for c in m.tool_calls or [])
    return "\n".join(lines) if lines else f"[{who}] (empty)"


def _render_call(call: ToolCall, max_chars: int) -> str:
    return f"[tool call {call.name} {call.id}] {_clip(_json(call.input), max_chars)}"


def _estimate_request(
    glove: CompactionHost, history: Sequence[Message], chars_per_token: float
) -> int:
    chars = len(glove.system_prompt)
    for t in glove.tools:
        spec = t.spec
        chars += len(spec.name) + len(spec.description) + len(_json(spec.input_schema))
    return int(chars / chars_per_token) + estimate_message_tokens(history, chars_per_token)
