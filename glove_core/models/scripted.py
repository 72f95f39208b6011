"""ScriptedModel: a real ModelAdapter that plays replies from a script, for tests and demos."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence

from glove_core.abort import AbortSignal
from glove_core.errors import ScriptExhaustedError
from glove_core.models.base import ModelRequest, ModelResponse
from glove_core.subscribers import ModelResponseCompleteEvent, Notify, TextDelta, ToolUse
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
            await notify("text_delta", TextDelta(message.text))
        for call in message.tool_calls or []:
            await notify("tool_use", ToolUse(call.id, call.name, dict(call.input)))
        usage = Usage(
            input_tokens=_estimate_tokens(request),
            output_tokens=max(1, len(message.text) // 4) + 20 * len(message.tool_calls or []),
        )
        stop = "tool_use" if message.tool_calls else "end_turn"
        await notify(
            "model_response_complete",
            ModelResponseCompleteEvent(message.text, list(message.tool_calls or []), usage, stop),
        )
        return ModelResponse(message=message, usage=usage, stop_reason=stop)

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
        return Message(sender="agent", tool_calls=[c.model_copy() for c in reply])
    raise TypeError(
        f"a script item must be a str, a list of ToolCall or an agent Message, got {reply!r}"
    )


def _estimate_tokens(request: ModelRequest) -> int:
    chars = len(request.system)
    for spec in request.tools:
        chars += len(spec.name) + len(spec.description) + 200
    # Runs over the whole history on every model call, so it avoids temporary lists.
    blocks = 0
    for message in request.messages:
        chars += len(message.text)
        if message.tool_calls:
            blocks += len(message.tool_calls)
        if message.tool_results:
            blocks += len(message.tool_results)
    return max(1, (chars + 50 * blocks) // 4)
