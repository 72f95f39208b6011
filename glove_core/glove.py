"""Glove: the agent. Holds the model, store, tools and subscribers, and runs requests.

It is a facade: one request is run by ``loop.py`` (handed a ``LoopParts``, never the Glove),
tool calls by ``_execute.py``, subagents by ``subagents.py``, outside events by ``events.py``.
Tools come from tool sources (``_tool_sources.py``): the folded tools, the subagent dispatch
tool, and any added with ``add_tool_source``. Requests on one Glove take turns; a request
waiting for its turn can be aborted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from opentelemetry.trace import Span

from glove_core._execute import ToolRunner, run_for_application
from glove_core._tool_sources import FoldedTools, ToolSources
from glove_core._turns import TurnPreparer, Turns
from glove_core.abort import AbortController, AbortSignal
from glove_core.compaction import CompactionConfig
from glove_core.context import (
    DEFAULT_PROVIDER_TIMEOUT,
    ContextDelivery,
    ContextProvider,
    ContextRegistry,
    ContextSnapshot,
)
from glove_core.context_items import (
    MAX_CONTEXT_PENDING_BYTES,
    ContextItem,
    ContextItemQueue,
    ToolsItem,
    current_tool_call,
    disabled_tools,
    validate_items,
)
from glove_core.display import DisplayManager
from glove_core.errors import GloveStateError, ReentrantRequestError
from glove_core.event_queue import WhenIdle
from glove_core.events import EventDisposition, EventHub, EventsConfig
from glove_core.execution import Execution, Turn
from glove_core.loop import (
    LoopParts,
    ModelSettings,
    RequestResult,
    run_request,
    runtime_context_event,
    user_message,
)
from glove_core.models.base import ModelAdapter
from glove_core.resources import AsyncResource
from glove_core.result_limits import ResultLimits
from glove_core.result_summaries import ResultSummaries, checked_summaries
from glove_core.stores.base import StoreAdapter, TurnLockStore, has_capability, read_visible_history
from glove_core.stores.memory import MemoryStore
from glove_core.subagents import SUBAGENT_TOOL_NAME, SubAgentFactory, SubAgentRegistry
from glove_core.subscribers import Subscriber, SubscriberEvent, SubscriberSet
from glove_core.tools import Tool, ToolSource
from glove_core.tracing import agent_span, record_turn
from glove_core.types import ContentPart, Message, ToolCall, ToolResultData, new_id

__all__ = ["Glove", "TurnPreparer"]

logger = logging.getLogger(__name__)


class Glove(AsyncResource):
    """An agent: a model, a system prompt, tools, and a conversation store.

    Args:
        model: the model adapter (``AnthropicModel``, ``ScriptedModel``, …).
        system_prompt: who the agent is and its rules. Stable: live state belongs in runtime
            context, not here, so the provider's prompt cache keeps hitting.
        store: where the conversation lives; a fresh ``MemoryStore`` when omitted.
        display_manager: the display stack tools push to; a fresh one when omitted.
        server_mode: True when no human is at hand (headless): MCP tools never ask permission
            and discovery never asks the user.
        max_turns: the most model calls one request may make.
        max_retries: how often a tool that raised is retried before its error is reported.
        events: how outside events are queued, woken on and formatted (``EventsConfig``).
        max_context_bytes: bytes (as JSON) of ``add_context`` items waiting at once; 256 KiB.
        result_limits: bounds of one tool result and its media (``ResultLimits``).
        result_summaries: send earlier user turns' tool results as summaries (``ResultSummaries``).
        execution: how turns run (``glove_core.execution.Execution``): None (the default) runs
            them in this process; ``glove_core.dbos_execution.DbosExecution`` runs each as a
            durable workflow that another process resumes after a crash.

    Example:
        >>> agent = Glove(model=ScriptedModel(["Hi!"]), system_prompt="Be brief.").build()
        >>> result = await agent.process_request("Hello")  # doctest: +SKIP
    """

    def __init__(
        self,
        model: ModelAdapter,
        system_prompt: str,
        store: StoreAdapter | None = None,
        display_manager: DisplayManager | None = None,
        server_mode: bool = False,
        compaction: CompactionConfig | None = None,
        max_turns: int = 120,
        max_retries: int = 3,
        events: EventsConfig | None = None,
        max_context_bytes: int = MAX_CONTEXT_PENDING_BYTES,
        *,
        result_limits: ResultLimits | None = None,
        result_summaries: ResultSummaries | None = None,
        execution: Execution | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self._settings = ModelSettings(model, system_prompt)
        self._store: StoreAdapter = store if store is not None else MemoryStore(new_id("conv_"))
        self._display = display_manager if display_manager is not None else DisplayManager()
        self._server_mode = server_mode
        self._compaction = compaction
        self.max_turns = max_turns
        self.max_retries = max_retries
        self.result_limits = result_limits if result_limits is not None else ResultLimits()
        self._summaries = checked_summaries(result_summaries)
        if execution is not None and not isinstance(execution, Execution):
            raise TypeError(
                f"execution must be an Execution (run_turn, resume_turns), got {execution!r}"
            )
        self._execution = execution
        self._subscribers = SubscriberSet()
        self._folded = FoldedTools()
        self._subagents = SubAgentRegistry(self._subscribers)
        self._tool_sources = ToolSources(self._folded, self._subagents)
        self._built = False
        # With the store's turn lock, turns never overlap across processes either.
        hold = self._store.turn_lock if has_capability(self._store, TurnLockStore) else None
        self._turns = Turns(hold)
        self._context = ContextRegistry()
        self._context_items = ContextItemQueue(max_context_bytes)
        self._events = EventHub(
            events, publish=self._subscribers.publish, busy=self._turns.busy, wake=self._wake
        )

    # -- building ---------------------------------------------------------------------------

    def fold(self, tool: Tool) -> Glove:
        """Add a tool. Legal before and after ``build()``; a tool folded while a request runs is
        offered from its next model call.

        Raises:
            ToolNameConflictError: a tool with that name is already folded.
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"fold() takes a Tool (use @tool or Tool(...)), got {tool!r}")
        self._tool_sources.check_new([tool.name])
        self._folded.add(tool)
        return self

    def unfold(self, name: str) -> Tool:
        """Remove a folded tool and return it (a tool source's tools are its own to remove).

        Raises:
            KeyError: no tool of that name is folded.
        """
        return self._folded.pop(name)

    def add_tool_source(self, source: ToolSource) -> Callable[[], None]:
        """Offer the tools of ``source`` too, after the folded ones; an MCP mount is one.

        The source is asked for its tools before every model call, so tools it adds later are
        offered from the next call. Each change to the tool list changes the start of the
        prompt, which the provider's cache cannot reuse past that point: add tools rarely,
        append rather than reorder, and use ``switch_tools`` to take one away.

        Returns:
            A function that removes the source again.

        Raises:
            TypeError: ``source`` has no ``get_tools()``.
            ValueError: it was added already.
        """
        return self._tool_sources.add(source)

    def build(self) -> Glove:
        """Finish setup; requests may run from now on. Calling it again does nothing.

        Folds ``glove_update_tasks`` when the store implements ``TaskStore`` and
        ``glove_post_to_inbox`` when it implements ``InboxStore`` (unless a tool of that name
        is already folded).
        """
        # Imported here so this edit stays inside build(); builtin never imports glove.
        from glove_core.builtin import post_to_inbox_tool, update_tasks_tool
        from glove_core.stores.base import InboxStore, TaskStore

        if not self._built:
            builtins = []
            if has_capability(self._store, TaskStore):
                builtins.append(update_tasks_tool())
            if has_capability(self._store, InboxStore):
                builtins.append(post_to_inbox_tool())
            taken = self._tool_sources.names()
            for builtin in builtins:
                if builtin.name not in taken:
                    self._folded.add(builtin)
        self._built = True
        return self

    def define_sub_agent(self, name: str, description: str, factory: SubAgentFactory) -> Glove:
        """Register a subagent the model can run through the ``glove_invoke_subagent`` tool.

        Args:
            name: how the model names it.
            description: when to use it; the model reads it.
            factory: builds a fresh child ``Glove`` for each call (sync or async, no
                arguments). Its final text becomes the tool result.

        Raises:
            ToolNameConflictError: another tool is called ``glove_invoke_subagent``.
        """
        if not self._subagents.defined:
            self._tool_sources.check_new([SUBAGENT_TOOL_NAME])
        self._subagents.define(name, description, factory)
        return self

    def add_subscriber(self, subscriber: Subscriber) -> None:
        """Send every event of this Glove to ``subscriber``."""
        self._subscribers.add(subscriber)

    def remove_subscriber(self, subscriber: Subscriber) -> None:
        """Stop sending events to ``subscriber`` (unknown subscribers are ignored)."""
        self._subscribers.remove(subscriber)

    async def publish(self, event: SubscriberEvent) -> None:
        """Send ``event`` to every subscriber (for packages with their own event types, like
        glove_mcp's ``McpServerActivated``); a subscriber that raises is logged and skipped."""
        await self._subscribers.publish(event)

    def set_model(self, model: ModelAdapter) -> None:
        """Use another model from the next model call on."""
        self._settings.model = model

    # -- properties -------------------------------------------------------------------------

    @property
    def model(self) -> ModelAdapter:
        """The model adapter."""
        return self._settings.model

    @property
    def system_prompt(self) -> str:
        """Who the agent is and its rules. Assigning it takes effect from the next model call
        and invalidates the provider's prompt cache from the first byte: keep it stable."""
        return self._settings.system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str) -> None:
        self._settings.system_prompt = value

    @property
    def store(self) -> StoreAdapter:
        """The conversation store."""
        return self._store

    @property
    def display_manager(self) -> DisplayManager:
        """The display stack tools push to."""
        return self._display

    @property
    def server_mode(self) -> bool:
        """True when the agent runs headless."""
        return self._server_mode

    @property
    def tools(self) -> list[Tool]:
        """Every tool offered to the model now: the folded ones in the order they were folded,
        the subagent dispatch tool, then each tool source's, in the order they were added."""
        return self._tool_sources.get_tools()

    @property
    def subscribers(self) -> list[Subscriber]:
        """The subscribers, in the order they were added."""
        return list(self._subscribers.members)

    # -- running ----------------------------------------------------------------------------

    async def process_request(
        self, request: str | Sequence[ContentPart], signal: AbortSignal | None = None
    ) -> RequestResult:
        """Run one request: save it, call the model and tools until the model answers.

        Args:
            request: the user's text, or content parts (text, images, documents).
            signal: aborts the request, including while it waits for its turn.

        Returns:
            The final text, the messages this request saved, and the tokens it used.

        Raises:
            AbortError: ``signal`` fired. Every tool call made so far has a result in history.
            ReentrantRequestError: called from inside a tool of this same Glove.
            GloveStateError: ``build()`` was not called.
        """
        if self._turns.running_in_this_task(self):
            raise ReentrantRequestError()
        if not self._built:
            raise GloveStateError(
                "this Glove is not built: call .build() after folding its tools, then "
                "process_request()"
            )
        if isinstance(request, str) and not request.strip():
            raise ValueError("process_request() got an empty request; send some text or parts")
        if signal is None:
            signal = AbortSignal()
        message = user_message(request)
        result = await self._take_turn(signal, message)
        assert result is not None
        return result

    async def run_tool(
        self,
        name: str,
        input: dict[str, Any],
        *,
        requested_by: str = "application",
        signal: AbortSignal | None = None,
    ) -> ToolResultData:
        """Run tool ``name`` for the application, outside the model loop (say, a button in a
        view an MCP server rendered): one of the tools offered to the model, or an
        application-only tool of a source (``AppToolSource``).

        Whatever the tool, the person is asked first through the same ``permission_request``
        slot the model's calls use (its input also names ``requested_by``); a remembered
        "always" answer counts. In server mode nobody is there to ask: the application's call
        is its own decision, and runs as the model's calls do there. The result is bounded
        like a model's tool result, and is not saved in the conversation nor published to
        subscribers.

        Returns:
            The result; ``status="error"`` for an unknown tool, bad input or a refusal.

        Raises:
            AbortError: ``signal`` fired while the tool ran or waited for the permission
                (then the result says so instead).
        """
        tool = self._tool_sources.by_name().get(name) or self._tool_sources.app_tool(name)
        if tool is None:
            return ToolResultData(status="error", message=f"unknown tool {name!r}")
        call = ToolCall(id=new_id("app_"), name=name, input=dict(input))
        runner = self._loop_parts().runner
        asker = None if self.server_mode else requested_by
        return await run_for_application(runner, tool, call, signal or AbortSignal(), asker)

    async def _take_turn(
        self, signal: AbortSignal, message: Message | None
    ) -> RequestResult | None:
        """Run one turn: the user's ``message``, or (None) a wake-up with the queued events.

        A request's ``invoke_agent`` span covers its wait for the turn; a wake-up's starts once
        it holds the turn and has events (none when a request that ran first took them).
        """
        if message is None:
            return await self._run_turn(signal, None)
        with agent_span(self._store.identifier, "request", message.text) as span:
            return _traced(span, await self._run_turn(signal, message))

    async def _run_turn(self, signal: AbortSignal, message: Message | None) -> RequestResult | None:
        async with self._turns.turn(self, signal, after=self._events.after_turn):
            parts = self._loop_parts()
            execution = self._execution
            if message is not None:
                if execution is None:
                    return await run_request(parts, message, signal)
                return await execution.run_turn(self._turn(parts, signal), message, None)
            if execution is not None:
                # A turn a dead process left comes first: its events were taken already.
                await execution.resume_turns(self._turn(parts, signal))
            events = await self._events.take()
            if not events:
                return None  # a request that ran first already delivered them
            self._events.waking = events
            wake_message = self._events.message_for(events)
            with agent_span(self._store.identifier, "wake") as span:
                if execution is None:
                    woken = await run_request(parts, wake_message, signal, events=events)
                else:
                    turn = self._turn(parts, signal)
                    woken = await execution.run_turn(turn, wake_message, events)
                return _traced(span, woken)

    def _turn(self, parts: LoopParts, signal: AbortSignal) -> Turn:
        return Turn(conversation=self._store.identifier, parts=parts, signal=signal)

    async def resume_interrupted(
        self, signal: AbortSignal | None = None, *, wait: float | None = None
    ) -> int:
        """Finish the turns of this conversation that a dead process left unfinished (with a
        durable ``execution``; without one there are none).

        Args:
            signal: aborts the resumed turns.
            wait: the most seconds to wait for the turn (another process may hold it); None
                waits as long as it takes.

        Returns:
            How many turns were resumed.

        Raises:
            AbortError: the turn was not had within ``wait`` seconds.
        """
        execution = self._execution
        if execution is None:
            return 0
        if not self._built:
            raise GloveStateError("this Glove is not built: call .build() first")
        signal = signal if signal is not None else AbortSignal()
        waiting = AbortController()
        timer = (
            None
            if wait is None
            else asyncio.get_running_loop().call_later(wait, waiting.abort, "no turn in time")
        )
        try:
            async with self._turns.turn(self, waiting.signal, after=self._events.after_turn):
                if timer is not None:
                    timer.cancel()
                return await execution.resume_turns(self._turn(self._loop_parts(), signal))
        finally:
            if timer is not None:
                timer.cancel()

    async def _wake(self) -> None:
        await self._take_turn(AbortSignal(), None)

    def _loop_parts(self) -> LoopParts:
        publish, limits = self._subscribers.publish, self.result_limits
        runner = ToolRunner(
            agent=self,
            display=self._display,
            store=self._store,
            publish=publish,
            subscribed=lambda: self._subscribers.active,
            max_retries=self.max_retries,
            limits=limits,
        )
        return LoopParts(
            settings=self._settings,
            store=self._store,
            tool_sources=self._tool_sources,
            runner=runner,
            context=self._context,
            context_items=self._context_items,
            events=self._events,
            subscribers=self._subscribers,
            compaction=self._compaction,
            max_turns=self.max_turns,
            summaries=self._summaries,
        )

    # -- runtime context, events, context items ----------------------------------------------

    def add_context_provider(
        self,
        fn: ContextProvider,
        *,
        delivery: ContextDelivery = "iteration",
        key: str | None = None,
        timeout: float | None = DEFAULT_PROVIDER_TIMEOUT,
    ) -> Callable[[], None]:
        """Register a runtime context provider: ``fn(signal)`` returning text, parts or None.

        Args:
            fn: sync or async; gets the request's AbortSignal.
            delivery: ``iteration`` (re-read before every model call, never saved),
                ``request`` (read once per request, frozen, never saved) or ``history`` (text,
                saved as ``<context key=…>`` only when it changed).
            key: required and unique for ``history``; names the provider elsewhere.
            timeout: seconds before the provider counts as failed (None: no limit).

        Returns:
            A function that removes the provider.

        Raises:
            ValueError: a bad delivery, key or timeout.
        """
        return self._context.add(fn, delivery, key, timeout)

    async def get_runtime_context(
        self, signal: AbortSignal | None = None, delivery: ContextDelivery | None = None
    ) -> list[ContextSnapshot]:
        """Resolve the providers (of one delivery, or all) without saving anything.

        Raises:
            ContextProviderError: a provider failed.
        """
        signal = signal if signal is not None else AbortSignal()
        snapshots = await self._context.resolve(delivery, signal)
        await self._subscribers.publish(runtime_context_event(delivery or "all", snapshots))
        return snapshots

    async def emit_event(
        self,
        *,
        id: str,
        source: str,
        kind: str,
        content: str | list[ContentPart],
        when_idle: WhenIdle = "auto",
        expires_at: datetime | None = None,
    ) -> EventDisposition:
        """Hand the agent something that happened outside the conversation.

        Args:
            id: unique per event; the same id twice is a no-op (``"duplicate"``).
            source: who sent it, e.g. ``"webhook:ci"``.
            kind: what it is, e.g. ``"build.finished"``.
            content: text or content parts.
            when_idle: what an idle agent does: ``"wake"``, ``"defer"``, or ``"auto"`` (wake
                unless the user was active within ``user_activity_window``).
            expires_at: timezone-aware; an event still waiting then is dropped.

        Returns:
            ``"queued"`` (a turn is running: joins at its next tool step), ``"woke"``,
            ``"deferred"``, ``"dropped"`` (already expired) or ``"duplicate"``.

        Raises:
            EventTooLargeError: over ``EventsConfig.max_event_bytes``; nothing was queued.
            EventQueueFullError: the pending limits of ``EventsConfig`` are reached.
        """
        return await self._events.emit(id, source, kind, content, when_idle, expires_at)

    def notify_user_activity(self) -> None:
        """Tell the agent the user is active (typing, speaking): ``auto`` events defer."""
        self._events.notify_user_activity()

    async def wait_for_wakeups(self) -> None:
        """Wait until the event wake-up turns scheduled so far (and any they schedule) have
        run; deferred events still waiting for their timer do not count. Call it before
        ``aclose()`` to let woken turns finish instead of cancelling them."""
        await self._events.wait_for_wakeups()

    def add_turn_preparer(self, fn: TurnPreparer) -> Callable[[], None]:
        """Run ``fn(signal)`` before every request and every event wake-up, inside the turn.

        Returns:
            A function that removes it.
        """
        return self._turns.add_preparer(fn)

    async def add_context(self, items: Sequence[ContextItem], key: str | None = None) -> int:
        """Queue context items (``instruction``, ``notice``, ``disable_tools``,
        ``enable_tools``); they are saved once, at the next model call.

        Called from inside a tool, the items count as the tool's: a tool may add notices and
        switch tools off, never give instructions or switch tools on.

        Args:
            items: the items, all checked before any is queued.
            key: names this request; a retry with the same key and items records nothing.

        Returns:
            How many items were recorded (0 for a retry).

        Raises:
            ContextItemError: an item is invalid, over 32 KiB, or not allowed from a tool; or
                the items waiting would go over ``max_context_bytes``.
            ContextKeyConflictError: ``key`` was used before with different items.
        """
        source: Any = "tool" if current_tool_call.get() is not None else "app"
        checked = validate_items(items, source)
        return self._context_items.add(checked, source, key)

    def pending_context(self) -> list[ContextItem]:
        """The context items queued by ``add_context`` and ``switch_tools`` that the next
        model call will save, in order."""
        return [item for _source, items in self._context_items.pending for item in items]

    def switch_tools(self, *, disable: Sequence[str] = (), enable: Sequence[str] = ()) -> None:
        """Switch tools off or back on from the next model call, with the application's
        authority even when called from inside a tool (``add_context`` lets a tool only switch
        tools off). An MCP mount switches a deactivated server's tools this way.

        Cost to the prompt cache: none for the tools. A switched-off tool stays in the tool
        list sent to the model, so the cached prefix (tools, system prompt, saved history)
        survives; the switch is saved once as a short ``<context_update>`` message at the end
        of the history, and a call to a switched-off tool is answered ``tool_inactive``
        without running. Removing a tool instead (``unfold``) changes the tool list, and the
        provider re-reads the whole prompt at full price on the next call.

        Args:
            disable: tool names to switch off.
            enable: tool names to switch back on.
        """
        items: list[ContextItem] = []
        if disable:
            items.append(ToolsItem(disable=list(disable)))
        if enable:
            items.append(ToolsItem(enable=list(enable)))
        if items:
            self._context_items.add(validate_items(items, "app"), "app", None)

    async def switched_off_tools(self) -> set[str]:
        """The tools switched off now: by the saved history, then by switches still queued."""
        saved = disabled_tools(await read_visible_history(self._store))
        return self._context_items.switched_off(saved)

    # -- lifecycle --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop deferral timers and pending wake-ups. Queued events stay in their queue."""
        await self._events.aclose()

    def __repr__(self) -> str:
        return (
            f"<Glove model={self.model.name!r} store={self._store.identifier!r} "
            f"tools={len(self._tool_sources.names())}>"
        )


def _traced(span: Span | None, result: RequestResult | None) -> RequestResult | None:
    """``result``, its totals recorded on the turn's span first (when it records)."""
    if span is not None and result is not None:
        replies = sum(1 for m in result.messages if m.sender == "agent")
        record_turn(span, result.text, result.usage, replies)
    return result
