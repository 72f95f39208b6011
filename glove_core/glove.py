"""Glove: the agent. Holds the model, store, tools and subscribers, and runs requests.

It is a facade: one request is run by ``loop.py``, tool calls by ``_execute.py``, subagents by
``subagents.py``. Requests on one Glove take turns; a request waiting for its turn can be
aborted.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any

from glove_core.abort import AbortSignal
from glove_core.compaction import CompactionConfig
from glove_core.context import (
    DEFAULT_PROVIDER_TIMEOUT,
    ContextDelivery,
    ContextProvider,
    ContextRegistry,
    ContextSnapshot,
)
from glove_core.context_items import (
    ContextItem,
    ContextItemQueue,
    ToolsItem,
    current_tool_call,
    disabled_tools,
    validate_items,
)
from glove_core.display import DisplayManager
from glove_core.errors import GloveStateError, ReentrantRequestError, ToolNameConflictError
from glove_core.event_queue import WhenIdle
from glove_core.events import EventDisposition, EventHub, EventsConfig
from glove_core.loop import RequestResult, run_request, runtime_context_event, user_message
from glove_core.models.base import ModelAdapter
from glove_core.stores.base import StoreAdapter
from glove_core.stores.memory import MemoryStore
from glove_core.subagents import SubAgentFactory, SubAgentRegistry
from glove_core.subscribers import Subscriber, SubscriberSet
from glove_core.tools import Tool
from glove_core.types import ContentPart, Message, new_id

__all__ = ["Glove", "TurnPreparer"]

logger = logging.getLogger(__name__)

# The Gloves whose request is running in the current task (and the tasks it spawned), so a
# tool that calls process_request on its own Glove is caught instead of deadlocking.
_RUNNING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "glove_running", default=frozenset()
)


TurnPreparer = Callable[[AbortSignal], Awaitable[None] | None]
"""Runs before every request and every event wake-up, inside the turn."""


class Glove:
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
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self._model = model
        self.system_prompt = system_prompt
        self._store: StoreAdapter = store if store is not None else MemoryStore(new_id("conv_"))
        self._display = display_manager if display_manager is not None else DisplayManager()
        self._server_mode = server_mode
        self._compaction = compaction
        self.max_turns = max_turns
        self.max_retries = max_retries
        self._tools: dict[str, Tool] = {}
        self._subscribers = SubscriberSet()
        self._subagents = SubAgentRegistry(self)
        self._built = False
        self._turn = asyncio.Lock()
        self._context = ContextRegistry()
        self._context_items = ContextItemQueue()
        self._events = EventHub(self, events)
        self._preparers: list[TurnPreparer] = []

    # -- building ---------------------------------------------------------------------------

    def fold(self, tool: Tool) -> Glove:
        """Add a tool. Legal before and after ``build()``; a tool folded while a request runs is
        offered from its next model call.

        Raises:
            ToolNameConflictError: a tool with that name is already folded.
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"fold() takes a Tool (use @tool or Tool(...)), got {tool!r}")
        if tool.name in self._tools:
            raise ToolNameConflictError(tool.name)
        self._tools[tool.name] = tool
        return self

    def unfold(self, name: str) -> Tool:
        """Remove a tool and return it.

        Raises:
            KeyError: no tool has that name.
        """
        try:
            return self._tools.pop(name)
        except KeyError:
            raise KeyError(f"no tool named {name!r} is folded into this Glove") from None

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
            if isinstance(self._store, TaskStore):
                builtins.append(update_tasks_tool())
            if isinstance(self._store, InboxStore):
                builtins.append(post_to_inbox_tool())
            for builtin in builtins:
                if builtin.name not in self._tools:
                    self._tools[builtin.name] = builtin
        self._built = True
        return self

    def define_sub_agent(self, name: str, description: str, factory: SubAgentFactory) -> Glove:
        """Register a subagent the model can run through the ``glove_invoke_subagent`` tool.

        Args:
            name: how the model names it.
            description: when to use it; the model reads it.
            factory: builds a fresh child ``Glove`` for each call (sync or async, no
                arguments). Its final text becomes the tool result.
        """
        self._subagents.define(name, description, factory)
        return self

    def add_subscriber(self, subscriber: Subscriber) -> None:
        """Send every event of this Glove to ``subscriber``."""
        self._subscribers.add(subscriber)

    def remove_subscriber(self, subscriber: Subscriber) -> None:
        """Stop sending events to ``subscriber`` (unknown subscribers are ignored)."""
        self._subscribers.remove(subscriber)

    def set_model(self, model: ModelAdapter) -> None:
        """Use another model from the next model call on."""
        self._model = model

    # -- properties -------------------------------------------------------------------------

    @property
    def model(self) -> ModelAdapter:
        """The model adapter."""
        return self._model

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
        """The folded tools, in the order they were folded."""
        return list(self._tools.values())

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
        if id(self) in _RUNNING.get():
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

    async def _take_turn(
        self, signal: AbortSignal, message: Message | None
    ) -> RequestResult | None:
        """Run one turn: the user's ``message``, or (None) a wake-up with the queued events."""
        await signal.race(self._turn.acquire())
        token = _RUNNING.set(_RUNNING.get() | {id(self)})
        try:
            for preparer in list(self._preparers):
                prepared = preparer(signal)
                if inspect.isawaitable(prepared):
                    await prepared
            if message is not None:
                return await run_request(self, message, signal)
            events = await self._events.take()
            if not events:
                return None  # a request that ran first already delivered them
            self._events.waking = events
            wake_message = self._events.message_for(events)
            return await run_request(self, wake_message, signal, events=events)
        finally:
            _RUNNING.reset(token)
            self._turn.release()
            await self._events.after_turn()

    async def _wake(self) -> None:
        await self._take_turn(AbortSignal(), None)

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
        await self._subscribers.emit(
            "runtime_context", runtime_context_event(delivery or "all", snapshots)
        )
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
        """
        return await self._events.emit(id, source, kind, content, when_idle, expires_at)

    def notify_user_activity(self) -> None:
        """Tell the agent the user is active (typing, speaking): ``auto`` events defer."""
        self._events.notify_user_activity()

    def add_turn_preparer(self, fn: TurnPreparer) -> Callable[[], None]:
        """Run ``fn(signal)`` before every request and every event wake-up, inside the turn.

        Returns:
            A function that removes it.
        """
        self._preparers.append(fn)

        def remove() -> None:
            if fn in self._preparers:
                self._preparers.remove(fn)

        return remove

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
            ContextItemError: an item is invalid, over 32 KiB, or not allowed from a tool.
            ContextKeyConflictError: ``key`` was used before with different items.
        """
        source: Any = "tool" if current_tool_call.get() is not None else "app"
        checked = validate_items(items, source)
        return self._context_items.add(checked, source, key)

    def _switch_tools(self, *, disable: Sequence[str] = (), enable: Sequence[str] = ()) -> None:
        """Queue a tool switch with the application's authority. For framework code (an MCP
        mount switching a server's tools), which may run inside a tool call."""
        items: list[ContextItem] = []
        if disable:
            items.append(ToolsItem(disable=list(disable)))
        if enable:
            items.append(ToolsItem(enable=list(enable)))
        if items:
            self._context_items.add(items, "app", None)

    async def _switched_off_tools(self) -> set[str]:
        """Tools switched off by the saved history and by switches still queued."""
        off = disabled_tools(await self._store.get_messages())
        for _source, items in self._context_items.pending:
            for item in items:
                if isinstance(item, ToolsItem):
                    off = (off | set(item.disable)) - set(item.enable)
        return off

    # -- lifecycle --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop deferral timers and pending wake-ups. Queued events stay in their queue."""
        await self._events.aclose()

    async def __aenter__(self) -> Glove:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"<Glove model={self._model.name!r} store={self._store.identifier!r} "
            f"tools={len(self._tools)}>"
        )
