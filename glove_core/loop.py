"""One request: the iteration loop.

Each iteration: abort check → model call → save the reply → run its tool calls → save all
results in one message → repeat, until a reply has no tool calls or ``max_turns`` model calls
were made. History is read from the store once per request and then extended locally, so an
iteration costs no store read.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from glove_core._execute import execute_tool_calls, interrupted_result
from glove_core.abort import AbortError, AbortSignal
from glove_core.models.base import ModelRequest
from glove_core.subscribers import EventPayload, EventType, TokenConsumption
from glove_core.types import ContentPart, Message, TextPart, ToolResult, Usage

if TYPE_CHECKING:
    from glove_core.glove import Glove

__all__ = ["RequestResult", "StopReason", "run_request", "visible_history"]

logger = logging.getLogger(__name__)

StopReason = Literal["end_turn", "max_turns"]

_CLEANUP_DEADLINE = 5.0


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


def visible_history(messages: Sequence[Message]) -> list[Message]:
    """The part of a conversation the model sees: from the last compaction summary on."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].is_compaction:
            return list(messages[index:])
    return list(messages)


def user_message(request: str | Sequence[ContentPart]) -> Message:
    """The saved message for what the user sent."""
    if isinstance(request, str):
        return Message(sender="user", text=request)
    parts = list(request)
    text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    return Message(sender="user", text=text, content=parts)


def repair_dangling(history: Sequence[Message]) -> Message | None:
    """A results message for tool calls left unanswered by a crash, or None.

    Only a process that died mid-tool can leave the last saved message an agent reply with
    tool calls; answering them keeps the next model request valid.
    """
    if not history:
        return None
    last = history[-1]
    if last.sender != "agent" or not last.tool_calls:
        return None
    reason = (
        "interrupted: the process stopped before this tool call finished; its outcome is unknown"
    )
    return Message(
        sender="user", tool_results=[interrupted_result(c, reason) for c in last.tool_calls]
    )


class _Run:
    """The mutable state of one request."""

    def __init__(self, glove: Glove, signal: AbortSignal) -> None:
        self.glove = glove
        self.signal = signal
        self.history: list[Message] = []
        self.added: list[Message] = []
        self.usage = Usage()
        self.total = Usage()

    async def save(self, messages: list[Message]) -> None:
        await self.glove.store.append_messages(messages)
        self.history.extend(messages)
        self.added.extend(messages)

    async def notify(self, event_type: EventType, data: EventPayload) -> None:
        await self.glove._subscribers.emit(event_type, data)


async def run_request(
    glove: Glove, request: str | Sequence[ContentPart], signal: AbortSignal
) -> RequestResult:
    """Run one request to completion. The caller holds the Glove's turn."""
    run = _Run(glove, signal)
    store = glove.store
    run.history = visible_history(await store.get_messages())
    run.total = await store.get_usage()
    repair = repair_dangling(run.history)
    if repair is not None:
        logger.warning(
            "conversation %r ended with unanswered tool calls; answered them as interrupted",
            store.identifier,
        )
        await run.save([repair])
    await run.save([user_message(request)])

    text = ""
    turns = 0
    while True:
        if turns >= glove.max_turns:
            logger.info("request stopped after max_turns=%d model calls", glove.max_turns)
            return RequestResult(text, run.added, run.usage, "max_turns")
        signal.throw_if_aborted()
        model_request = ModelRequest(
            system=glove.system_prompt,
            tools=[t.spec for t in glove._tools.values()],
            messages=list(run.history),
        )
        response = await signal.race(glove.model.prompt(model_request, run.notify, signal))
        turns += 1
        reply = response.message
        await run.save([reply])
        run.usage = run.usage + response.usage
        run.total = run.total + response.usage
        await store.add_usage(response.usage)
        await store.increment_turn()
        await run.notify("token_consumption", TokenConsumption(response.usage, run.total))
        text = reply.text
        if not reply.tool_calls:
            return RequestResult(text, run.added, run.usage, "end_turn")
        await _run_tools(run, reply)
        signal.throw_if_aborted()


async def _run_tools(run: _Run, reply: Message) -> None:
    calls = reply.tool_calls or []
    results: list[ToolResult] = []
    try:
        results = await execute_tool_calls(run.glove, calls, run.signal)
    except BaseException as exc:
        # Something outside the tools failed (a cancelled task, a bug): answer every call
        # anyway so the saved history stays valid, then let the failure propagate.
        reason = (
            "aborted"
            if isinstance(exc, asyncio.CancelledError | AbortError)
            else f"failed: {type(exc).__name__}"
        )
        missing = [
            interrupted_result(c, f"the request {reason} before this call finished") for c in calls
        ]
        await _save_shielded(run, Message(sender="user", tool_results=missing))
        raise
    await run.save([Message(sender="user", tool_results=results)])


async def _save_shielded(run: _Run, message: Message) -> None:
    save = asyncio.ensure_future(run.save([message]))
    try:
        await asyncio.wait_for(asyncio.shield(save), _CLEANUP_DEADLINE)
    except asyncio.CancelledError:
        # We are being cancelled again; the shielded save still finishes in the background.
        raise
    except Exception:
        logger.exception("could not save the results of interrupted tool calls")
