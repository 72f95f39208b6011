"""ScriptedModel: a real ModelAdapter that plays replies from a script, for tests and demos."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Self

from glove_core.abort import AbortSignal
from glove_core.errors import ScriptExhaustedError
from glove_core.models.base import ModelRequest, ModelResponse, announce
from glove_core.subscribers import Notify, TextDelta, ToolUse
from glove_core.tools import ToolSpec
from glove_core.types import Message, ToolCall, Usage

__all__ = ["ScriptItem", "ScriptReply", "ScriptedModel"]

ScriptReply = str | list[ToolCall] | Message
"""A reply: text, a list of tool calls, or a whole agent Message."""

ScriptItem = ScriptReply | Callable[[ModelRequest], ScriptReply | Awaitable[ScriptReply]]
"""A reply, or a function of the request returning one (sync or async)."""


class ScriptedModel:
    """Answers each model call with the next item of ``script``.

    Records every request in ``.requests``. Usage is estimated at four characters a token so
    counters and compaction behave plausibly.

    Args:
        script: the replies, in order.
        latency: seconds to wait before each reply (abortable).
        name: the adapter name reported in logs.
    """

    def __init__(
        self, script: Sequence[ScriptItem], *, latency: float = 0.0, name: str = "scripted"
    ) -> None:
        self._script = list(script)
        self._next = 0
        self.latency = latency
        self._name = name
        self.requests: list[ModelRequest] = []
        self._estimate = _TokenEstimate()

    @classmethod
    def from_json(cls, source: str | os.PathLike[str] | Any, *, name: str = "scripted") -> Self:
        """Build a ScriptedModel from JSON data or a JSON file, e.g. for offline demos.

        The data is a list of replies, or ``{"latency": seconds, "replies": [...]}``. A reply
        is a string (text) or ``{"text"?: str, "tool_calls": [{"name": str, "input"?: {}}]}``.

        Raises:
            ValueError: the file cannot be read, is not JSON, or a reply has another shape.
        """
        if isinstance(source, (str, os.PathLike)):
            try:
                data: Any = json.loads(Path(source).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"cannot read script {os.fspath(source)!r}: {exc}") from None
        else:
            data = source
        latency = 0.0
        if isinstance(data, dict):
            latency = float(data.get("latency", 0.0))
            data = data.get("replies")
        if not isinstance(data, list):
            raise ValueError("a script is a JSON list of replies (or {'replies': [...]})")
        items: list[ScriptItem] = []
        for number, reply in enumerate(data, start=1):
            if isinstance(reply, str):
                items.append(reply)
                continue
            calls = reply.get("tool_calls", []) if isinstance(reply, dict) else None
            if not isinstance(calls, list) or not all(
                isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
            ):
                raise ValueError(
                    f"script reply #{number} must be a string or "
                    '{"text": ..., "tool_calls": [{"name": ..., "input": {...}}]}'
                )
            tool_calls = [
                ToolCall(id=f"script-{number}-{i}", name=c["name"], input=c.get("input", {}))
                for i, c in enumerate(calls)
            ]
            items.append(
                Message(
                    sender="agent", text=str(reply.get("text", "")), tool_calls=tool_calls or None
                )
            )
        return cls(items, latency=latency, name=name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        """How many script items are left."""
        return len(self._script) - self._next

    def extend(self, items: Sequence[ScriptItem]) -> None:
        """Append more replies to the script."""
        self._script.extend(items)

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        self.requests.append(request)
        if self._next >= len(self._script):
            last = request.messages[-1].text if request.messages else None
            raise ScriptExhaustedError(len(self._script), last)
        item = self._script[self._next]
        self._next += 1
        if self.latency > 0:
            sleep = asyncio.sleep(self.latency)
            await (signal.race(sleep) if signal is not None else sleep)
        reply = _resolve(item, request)
        if inspect.isawaitable(reply):
            reply = await reply
        message = _to_message(reply)
        if message.text:
            await notify(TextDelta(message.text))
        for call in message.tool_calls or []:
            await notify(ToolUse(call.id, call.name, dict(call.input)))
        usage = Usage(
            input_tokens=self._estimate(request),
            output_tokens=max(1, len(message.text) // 4) + 20 * len(message.tool_calls or []),
        )
        stop = "tool_use" if message.tool_calls else "end_turn"
        return await announce(notify, ModelResponse(message, usage, stop), streamed=True)

    def __repr__(self) -> str:
        return f"ScriptedModel(items={len(self._script)}, used={self._next})"


def _resolve(item: ScriptItem, request: ModelRequest) -> ScriptReply | Awaitable[ScriptReply]:
    if isinstance(item, (str, list, Message)):
        return item
    return item(request)


def _to_message(reply: ScriptReply) -> Message:
    if isinstance(reply, Message):
        if reply.sender != "agent":
            raise TypeError("a scripted Message reply must have sender='agent'")
        return reply.model_copy(deep=True)
    if isinstance(reply, str):
        return Message(sender="agent", text=reply)
    if isinstance(reply, list) and all(isinstance(c, ToolCall) for c in reply):
        # Frozen values: the script's calls can be the reply's own (a copy would share the
        # same input dict anyway).
        return Message(sender="agent", tool_calls=list(reply))
    raise TypeError(
        f"a script item must be a str, a list of ToolCall or an agent Message, got {reply!r}"
    )


class _TokenEstimate:
    """The input-token estimate (four characters a token, 50 characters a tool block), counted
    once per change: a conversation's next request starts with the saved prefix of the last
    one, so only what was added since is counted (the prefix is compared object by object, at
    C speed; anything else is counted whole)."""

    def __init__(self) -> None:
        self._tools: list[ToolSpec] = []
        self._tool_chars = 0
        self._prefix: list[Message] = []
        self._chars = 0
        self._blocks = 0

    def __call__(self, request: ModelRequest) -> int:
        if request.tools != self._tools:
            self._tools = list(request.tools)
            self._tool_chars = sum(len(s.name) + len(s.description) + 200 for s in request.tools)
        messages = request.messages
        saved = request.saved_count
        known = len(self._prefix)
        if known <= saved and messages[:known] == self._prefix:
            chars, blocks = _count(messages[known:saved])
            chars, blocks = chars + self._chars, blocks + self._blocks
        else:
            chars, blocks = _count(messages[:saved])
        self._prefix, self._chars, self._blocks = messages[:saved], chars, blocks
        extra_chars, extra_blocks = _count(messages[saved:])
        chars += len(request.system) + self._tool_chars + extra_chars
        return max(1, (chars + 50 * (blocks + extra_blocks)) // 4)


def _count(messages: Sequence[Message]) -> tuple[int, int]:
    """Characters of text and tool blocks in ``messages``."""
    chars = blocks = 0
    for message in messages:
        chars += len(message.text)
        if message.tool_calls:
            blocks += len(message.tool_calls)
        if message.tool_results:
            blocks += len(message.tool_results)
    return chars, blocks
