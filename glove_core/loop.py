"""One request: the iteration loop.

Each iteration: abort check → model call → save the reply → run its tool calls → save all
results in one message → repeat, until a reply has no tool calls or ``max_turns`` model calls
were made. History is read from the store once per request and then extended locally, so an
iteration costs no store read.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal, cast

from glove_core._deferral import attach_references
from glove_core._execute import ToolRunner, execute_tool_calls, interrupted_result
from glove_core._history_facts import history_facts
from glove_core._model_views import ModelViews
from glove_core._tool_sources import ToolSources
from glove_core.abort import AbortError, AbortSignal
from glove_core.builtin.inbox import (
    POST_TO_INBOX_TOOL_NAME,
    blocking_reminder,
    pending_blocking_reminder,
    place_transient,
    take_resolved_inbox,
)
from glove_core.compaction import CompactionConfig, compact, maybe_compact
from glove_core.context import (
    ContextDelivery,
    ContextRegistry,
    ContextSnapshot,
    history_context_message,
    snapshot_message,
)
from glove_core.context_items import ContextItemQueue, disabled_tools
from glove_core.errors import ContextWindowExceededError
from glove_core.event_queue import OutsideEvent
from glove_core.events import EventHub, batch_already_saved
from glove_core.models.base import ModelAdapter, ModelRequest, ModelResponse, RenderFreeMessages
from glove_core.result import RequestResult, StopReason
from glove_core.result_summaries import (
    ResultSummaries,
    SummaryCache,
    last_user_turn_index,
    summarize_history,
)
from glove_core.steps import TurnSteps
from glove_core.stores.base import (
    PositionalHistoryStore,
    ReplyStore,
    RequestStartStore,
    StoreAdapter,
    has_capability,
    read_visible_history,
    since_last_compaction,
)
from glove_core.subscribers import (
    RuntimeContextEvent,
    SubscriberEvent,
    SubscriberSet,
    TokenConsumption,
)
from glove_core.tools import Tool
from glove_core.tracing import chat_span, in_recording_span, record_chat
from glove_core.types import (
    ContentPart,
    InboxItem,
    Message,
    TextPart,
    ToolResult,
    Usage,
    sum_usage,
)

__all__ = [
    "LoopParts",
    "ModelSettings",
    "RequestResult",
    "StopReason",
    "last_user_turn_index",
    "repair_dangling",
    "run_request",
    "runtime_context_event",
    "user_message",
    "visible_history",
]

logger = logging.getLogger(__name__)

_CLEANUP_DEADLINE = 5.0


@dataclass
class ModelSettings:
    """The model and the system prompt, read before every model call: ``Glove.set_model`` and
    assigning ``Glove.system_prompt`` take effect from the next call."""

    model: ModelAdapter
    system_prompt: str


@dataclass(frozen=True, kw_only=True)
class LoopParts:
    """Everything one request needs, handed over by the Glove; the loop holds no Glove.

    It is also the ``CompactionHost`` that compaction reads.
    """

    settings: ModelSettings
    store: StoreAdapter
    tool_sources: ToolSources
    """Asked for the tools before every model call and every tool step (and which of them are
    deferred: ``ToolSources.prefix``)."""
    runner: ToolRunner
    context: ContextRegistry
    context_items: ContextItemQueue
    events: EventHub
    subscribers: SubscriberSet
    compaction: CompactionConfig | None
    max_turns: int
    summaries: ResultSummaries | None = None
    """Send tool results of earlier user turns as summaries; None sends them whole."""

    @property
    def model(self) -> ModelAdapter:
        return self.settings.model

    @property
    def system_prompt(self) -> str:
        return self.settings.system_prompt

    @property
    def tools(self) -> list[Tool]:
        return self.tool_sources.get_tools()

    async def publish(self, event: SubscriberEvent) -> None:
        await self.subscribers.publish(event)


def visible_history(messages: Sequence[Message]) -> list[Message]:
    """The part of a conversation the model sees: from the last compaction summary on."""
    return since_last_compaction(messages)


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

    def __init__(self, parts: LoopParts, signal: AbortSignal) -> None:
        self.parts = parts
        self.signal = signal
        self.history: list[Message] = []
        self.added: list[Message] = []
        self._usage = Usage()
        self._total = Usage()
        # Each model call's usage, summed when read: a Usage is a validated model, and adding
        # two per call cost more than anything else the loop does with them.
        self._calls: list[Usage] = []
        self.disabled: set[str] = set()
        self.request_context: Message | None = None
        self.request_index = 0
        # The visible history at the start. Enough for ``batch_already_saved``: a batch saved by
        # a process that died before marking it is the last thing that process wrote, so no
        # compaction can have hidden it.
        self.saved_before: list[Message] = []
        self.last_usage: Usage | None = None
        self.reminder: Message | None = None  # transient: pending blocking inbox items
        self.sent_count = 0
        self.views = ModelViews()  # each message as models see it, kept per change
        self.summaries: SummaryCache = {}
        self.traced = False  # whether this request's spans record (its invoke_agent span does)
        self.text = ""  # the last reply's text
        self.steps: TurnSteps | None = None
        self.base_count = 0  # durable only: the conversation's length before this request

    @property
    def usage(self) -> Usage:
        """The tokens of this request's model calls."""
        self._fold()
        return self._usage

    @usage.setter
    def usage(self, value: Usage) -> None:
        self._fold()
        self._usage = value

    @property
    def total(self) -> Usage:
        """The conversation's tokens, this request's calls included."""
        self._fold()
        return self._total

    @total.setter
    def total(self, value: Usage) -> None:
        self._fold()
        self._total = value

    def add_usage(self, usage: Usage) -> None:
        """Count one model call's usage in ``usage`` and ``total``."""
        self._calls.append(usage)

    def _fold(self) -> None:
        if self._calls:
            added = sum_usage(self._calls)
            self._calls.clear()
            self._usage = self._usage + added
            self._total = self._total + added

    def as_sent(self) -> list[Message]:
        """The saved history as the next model call sends it: tool results of earlier user
        turns summarised when the Glove sends summaries (the store keeps them whole)."""
        config = self.parts.summaries
        if config is None:
            return self.history
        return summarize_history(self.history, config, self.summaries)

    async def save(self, messages: list[Message]) -> None:
        await self.parts.store.append_messages(messages)
        self.saved(messages)

    def saved(self, messages: list[Message]) -> None:
        """Keep ``messages``, just saved, in this request's history."""
        self.history.extend(messages)
        self.added.extend(messages)
        if any(m.framework_context == "runtime" for m in messages):
            self.disabled = disabled_tools(messages, start=self.disabled)

    async def notify(self, event: SubscriberEvent | str, data: object = None) -> None:
        if isinstance(event, str):
            # A model adapter written for notify(event_type, data), before events were typed.
            warnings.warn(
                "notify(event_type, data) is deprecated: model adapters call notify(event) "
                "with the typed event alone",
                DeprecationWarning,
                stacklevel=2,
            )
            if data is None or not hasattr(data, "kind"):
                raise TypeError(f"notify({event!r}, ...) needs a typed event, got {data!r}")
            event = cast(SubscriberEvent, data)
        subscribers = self.parts.subscribers
        if subscribers.active:  # most events of a model call have nobody to go to
            await subscribers.publish(event)

    async def save_events(
        self, events: list[OutsideEvent], where: Literal["tool_step", "request", "wake"]
    ) -> Message:
        hub = self.parts.events
        message = hub.message_for(events)
        # A crash between saving a batch and marking it injected must not save it twice.
        if not batch_already_saved(message, events, (*self.saved_before, *self.added)):
            await self.save([message])
        await hub.mark_injected(events, where)
        return message


@dataclass(frozen=True)
class _Delta:
    """What one durable step changed in a request's state: recorded with the step, applied
    when the step is replayed instead of run."""

    history: list[Message]
    """The messages the step added to the history, or the whole history it replaced."""
    replaced: bool
    added: list[Message]
    saved_before: list[Message] | None
    scalars: dict[str, object]


_SCALARS = (
    "usage",
    "total",
    "disabled",
    "request_context",
    "request_index",
    "last_usage",
    "reminder",
    "sent_count",
    "text",
)

_Part = Callable[[list[Message] | None], Awaitable[None]]


async def _in_step(run: _Run, name: str, part: _Part) -> None:
    """Run ``part`` as a durable step: its changes to the request's state are recorded and,
    when the step is replayed, applied without running it."""
    steps = run.steps
    assert steps is not None
    ran = False

    async def body() -> _Delta:
        nonlocal ran
        ran = True
        history, length, added = run.history, len(run.history), len(run.added)
        saved_before = run.saved_before
        adopted = await _adopt(run) if steps.first_live_step() else None
        await part(adopted)
        replaced = run.history is not history or len(run.history) < length
        return _Delta(
            history=list(run.history) if replaced else run.history[length:],
            replaced=replaced,
            added=run.added[added:],
            saved_before=None if run.saved_before is saved_before else run.saved_before,
            scalars={name: getattr(run, name) for name in _SCALARS},
        )

    delta = await steps.step(name, body)
    if ran:
        return
    run.history = list(delta.history) if delta.replaced else [*run.history, *delta.history]
    run.added.extend(delta.added)
    if delta.saved_before is not None:
        run.saved_before = delta.saved_before
    for key, value in delta.scalars.items():
        setattr(run, key, value)


async def _adopt(run: _Run) -> list[Message]:
    """What the process that died saved during the step it did not finish recording: kept
    in this request's state, so nothing is saved twice."""
    store = run.parts.store
    assert isinstance(store, PositionalHistoryStore)
    extra = await store.get_messages_from(run.base_count + len(run.added))
    if extra:
        logger.info(
            "resumed turn of %r: %d message(s) saved before the crash kept",
            store.identifier,
            len(extra),
        )
        run.saved(extra)
        if any(m.is_compaction for m in extra):
            run.history = since_last_compaction(run.history)
    return extra


async def run_request(
    parts: LoopParts,
    request: Message,
    signal: AbortSignal,
    events: list[OutsideEvent] | None = None,
    *,
    steps: TurnSteps | None = None,
) -> RequestResult:
    """Run one request to completion. The caller holds the Glove's turn.

    ``request`` is the user's message, or for a wake-up the message carrying ``events``.
    ``steps`` (a durable execution's) runs each part of the request that touches the world as
    a step it records; without it the parts run directly.
    """
    run = _Run(parts, signal)
    store = parts.store
    if steps is None:
        await _start(run, request, events)
    else:
        run.steps = steps
        if not isinstance(store, PositionalHistoryStore):
            raise TypeError(
                f"a durable execution needs a store that counts its messages "
                f"(PositionalHistoryStore); {type(store).__name__} does not"
            )
        run.base_count = await steps.step("glove.position", store.count_messages)
        await _in_step(run, "glove.start", partial(_start, run, request, events))

    # Asked once per request: a runtime-checkable protocol check is not free; nor is asking
    # whether this turn records spans (it does when its ``invoke_agent`` span does).
    replies = store if has_capability(store, ReplyStore) else None
    run.traced = in_recording_span()
    turns = 0
    while True:
        if turns >= parts.max_turns:
            logger.info("request stopped after max_turns=%d model calls", parts.max_turns)
            return RequestResult(run.text, run.added, run.usage, "max_turns")
        signal.throw_if_aborted()
        if steps is None:
            await _model_call(run, replies)
        else:
            await _in_step(run, "glove.model", partial(_model_call, run, replies))
        turns += 1
        reply = run.history[-1]
        if not reply.tool_calls:
            return RequestResult(run.text, run.added, run.usage, "end_turn")
        results = await _run_tools(run, reply)
        if steps is None:
            await _save_results(run, reply, results)
        else:
            await _in_step(run, "glove.results", partial(_save_results, run, reply, results))
        signal.throw_if_aborted()


async def _start(
    run: _Run,
    request: Message,
    events: list[OutsideEvent] | None,
    adopted: list[Message] | None = None,
) -> None:
    """Everything before the first model call: the history read, leftovers of a crash
    answered, resolved inbox items, deferred events and context, the request saved."""
    store = run.parts.store
    if adopted:
        # A durable turn resumed after dying during its start: what it saved is kept, the rest
        # of the state read again.
        await _restart(run)
        if any(m.id == request.id for m in adopted):
            return
        run.request_index = len(run.history)
        if events is not None:
            await run.save_events(events, "wake")
        else:
            await run.save([request])
        return
    # Only what the model sees is read (from the last compaction on): a request costs the
    # visible history, not the whole conversation. Compaction restates the tools switched off
    # before it (see ``compaction``), so the window alone says which are off.
    inbox: list[InboxItem] | None = None
    if has_capability(store, RequestStartStore):
        start = await store.read_request_start()  # one read for the three below
        run.history, run.total, inbox = start.messages, start.usage, start.inbox
    else:
        run.history = await read_visible_history(store)
        run.total = await store.get_usage()
    run.saved_before = list(run.history)
    # One pass over the history read: what the parts below would each have walked it for.
    facts = history_facts(run.history)
    run.disabled = disabled_tools(facts.runtime)
    run.views.seed(facts)
    run.parts.tool_sources.prefix.seed(store.identifier, facts)
    repair = repair_dangling(run.history)
    if repair is not None:
        logger.warning(
            "conversation %r ended with unanswered tool calls; answered them as interrupted",
            store.identifier,
        )
        await run.save([repair])
    await take_resolved_inbox(store, run.save, inbox)
    # Read once per request (and again after the agent posts to its inbox), not per model call.
    # Taking the resolved items changes none of the pending ones: the start's read still holds.
    run.reminder = (
        await pending_blocking_reminder(store) if inbox is None else blocking_reminder(inbox)
    )
    await _before_request_message(run, is_wake=events is not None)
    run.request_index = len(run.history)
    if events is not None:
        await run.save_events(events, "wake")
    else:
        await run.save([request])


async def _restart(run: _Run) -> None:
    """The state of a request read again from the store (a resumed durable start)."""
    store = run.parts.store
    added = run.added
    run.history = await read_visible_history(store)
    run.total = await store.get_usage()
    run.saved_before = list(run.history)
    run.added = list(added)
    run.disabled = disabled_tools(run.history)
    run.reminder = await pending_blocking_reminder(store)
    ids = [m.id for m in run.history]
    first = next((m for m in added if m.sender == "user"), None)
    run.request_index = ids.index(first.id) if first is not None and first.id in ids else 0


async def _model_call(
    run: _Run, replies: ReplyStore | None, adopted: list[Message] | None = None
) -> None:
    """One model call and the saves around it: pending context items, compaction when due,
    the call (compacting once when the model finds the request too long), the reply saved
    with its usage."""
    parts, signal, store = run.parts, run.signal, run.parts.store
    if adopted and adopted[-1].sender == "agent" and adopted[-1].framework_context is None:
        # A resumed durable turn: the reply was saved by the process that died.
        run.text = adopted[-1].text
        return
    overflow_compacted = False
    while True:
        items = parts.context_items.take()
        if items is not None:
            await run.save([items])
        if parts.compaction is not None:
            compacted = await maybe_compact(
                parts,
                parts.compaction,
                run.history,
                run.last_usage,
                run.history[run.sent_count :],
                signal,
                run.save,
                as_sent=run.as_sent() if parts.summaries is not None else None,
            )
            if compacted is not None:
                run.history = compacted
                run.request_index = len(compacted)
                run.last_usage = None
        run.sent_count = len(run.history)
        model_request = await _build_model_request(run)
        try:
            if run.traced:
                response = await _traced_model_call(run, model_request)
            else:
                prompt = parts.model.prompt(model_request, run.notify, signal)
                response = await (signal.race(prompt) if signal.can_fire else prompt)
        except ContextWindowExceededError:
            if overflow_compacted or not await _compact_after_overflow(run):
                raise
            overflow_compacted = True
            continue  # the same step again, on the compacted history
        break
    reply = response.message
    run.last_usage = response.usage
    if replies is not None:
        await replies.append_reply(reply, response.usage)  # one write for all three
        run.saved([reply])
    else:
        await run.save([reply])
        await store.add_usage(response.usage)
        await store.increment_turn()
    run.add_usage(response.usage)
    if parts.subscribers.active:
        await run.notify(TokenConsumption(response.usage, run.total))
    run.text = reply.text


async def _save_results(
    run: _Run, reply: Message, results: list[ToolResult], adopted: list[Message] | None = None
) -> None:
    """The results of one reply saved in one message, then what arrived meanwhile: a changed
    inbox reminder, outside events."""
    parts, store = run.parts, run.parts.store
    if not adopted or not any(m.tool_results for m in adopted):
        sources = parts.tool_sources
        if sources.may_join:
            # Tools that joined since the last call (a list_changed) are loaded by these
            # results, so they reach the model without touching the cached prefix.
            pending = sources.prefix.pending(
                store.identifier, run.history, results, sources.listing(), sources.joined()
            )
            results = attach_references(results, pending)
        await run.save([Message(sender="user", tool_results=results)])
    calls = reply.tool_calls or []
    if any(c.name == POST_TO_INBOX_TOOL_NAME for c in calls):
        run.reminder = await pending_blocking_reminder(store)
    pending_events = await parts.events.take(only_if_new=True)
    if pending_events:
        await run.save_events(pending_events, "tool_step")


async def _traced_model_call(run: _Run, request: ModelRequest) -> ModelResponse:
    """The model call under its ``chat {model}`` span."""
    model, signal = run.parts.model, run.signal
    with chat_span(model, run.parts.store) as chat:
        response = await signal.race(model.prompt(request, run.notify, signal))
        if chat is not None:
            record_chat(chat, response.usage, response.stop_reason)
        return response


async def _compact_after_overflow(run: _Run) -> bool:
    """The model refused the request as too long: compact once, if compaction is on and there
    is something to compact. Returns whether it did."""
    config = run.parts.compaction
    if config is None:
        return False
    logger.warning("the model call exceeded the context window; compacting and retrying once")
    try:
        run.history = await compact(
            run.parts, config, run.history, signal=run.signal, save=run.save
        )
    except ValueError:
        return False  # nothing to compact: let the original error through
    run.request_index = len(run.history)
    run.last_usage = None
    run.sent_count = len(run.history)
    return True


async def _before_request_message(run: _Run, *, is_wake: bool) -> None:
    """Deferred events, changed history context, and the frozen request context."""
    parts = run.parts
    if not is_wake:
        deferred = await parts.events.take()
        if deferred:
            await run.save_events(deferred, "request")
    context = parts.context
    if context.has("history"):
        snapshots = await context.resolve("history", run.signal)
        await _report_context(run, "history", snapshots)
        changed = history_context_message(snapshots, run.history)
        if changed is not None:
            await run.save([changed])
    if context.has("request"):
        snapshots = await context.resolve("request", run.signal)
        await _report_context(run, "request", snapshots)
        run.request_context = snapshot_message(snapshots)


async def _build_model_request(run: _Run) -> ModelRequest:
    parts = run.parts
    sent = run.as_sent()
    summarized = (
        0
        if sent is run.history
        else sum(s is not saved for s, saved in zip(sent, run.history, strict=True))
    )
    # Built from the model views directly (kept per message, extended per call), so the
    # request needs no second pass to take render_data out.
    views = run.views.history(sent)
    request_index: int | None = None
    # The request's own list, built once: a history of hundreds of messages is copied once
    # per model call, not once per step below.
    messages = RenderFreeMessages(views)
    if run.request_context is not None:
        request_index = run.request_index
        messages.insert(request_index, run.views.one(run.request_context))
    saved_count = len(messages)
    if parts.context.has("iteration"):
        snapshots = await parts.context.resolve("iteration", run.signal)
        await _report_context(run, "iteration", snapshots)
        transient = snapshot_message(snapshots)
        if transient is not None:
            messages.append(run.views.one(transient))
    # Never saved; appended after the saved prefix, so it never splits a tool call from its result.
    reminder = run.reminder
    if reminder is not None:
        messages = RenderFreeMessages(place_transient(messages, run.views.one(reminder)))
    sources = parts.tool_sources
    plan = sources.prefix.plan(
        parts.store.identifier, run.history, sources.listing(), sources.joined()
    )
    return ModelRequest(
        system=parts.system_prompt,
        tools=list(plan.specs),
        messages=messages,
        saved_count=saved_count,
        request_context_index=request_index,
        conversation_id=parts.store.identifier,
        summarized=summarized,
        deferred_tools=plan.deferred,
        tools_may_join=sources.may_join,
    )


async def _report_context(
    run: _Run, delivery: ContextDelivery, snapshots: list[ContextSnapshot]
) -> None:
    if run.parts.subscribers.active:
        await run.notify(runtime_context_event(delivery, snapshots))


def runtime_context_event(
    delivery: ContextDelivery | Literal["all"], snapshots: list[ContextSnapshot]
) -> RuntimeContextEvent:
    """The subscriber payload for resolved snapshots, media replaced by placeholders."""
    rendered: list[tuple[str, str]] = []
    for snap in snapshots:
        if snap.value is None:
            continue
        if isinstance(snap.value, str):
            rendered.append((snap.name, snap.value))
        else:
            rendered.append(
                (
                    snap.name,
                    "\n".join(
                        p.text if isinstance(p, TextPart) else f"[{p.type}: {p.media_type}]"
                        for p in snap.value
                    ),
                )
            )
    return RuntimeContextEvent(delivery, rendered)


async def _run_tools(run: _Run, reply: Message) -> list[ToolResult]:
    calls = reply.tool_calls or []
    try:
        parts = run.parts
        tools = parts.tool_sources.by_name()
        return await execute_tool_calls(
            parts.runner, tools, calls, run.signal, run.disabled, run.steps, run.traced
        )
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


async def _save_shielded(run: _Run, message: Message) -> None:
    save = asyncio.ensure_future(run.save([message]))
    try:
        await asyncio.wait_for(asyncio.shield(save), _CLEANUP_DEADLINE)
    except asyncio.CancelledError:
        # We are being cancelled again; the shielded save still finishes in the background.
        raise
    except Exception:
        logger.exception("could not save the results of interrupted tool calls")
