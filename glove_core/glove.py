"""Glove: the agent. Holds the model, store, tools and subscribers, and runs requests.

It is a facade: one request is run by ``loop.py``, tool calls by ``_execute.py``, subagents by
``subagents.py``. Requests on one Glove take turns; a request waiting for its turn can be
aborted.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Sequence

from glove_core.abort import AbortController, AbortSignal
from glove_core.display import DisplayManager
from glove_core.errors import GloveStateError, ReentrantRequestError, ToolNameConflictError
from glove_core.loop import RequestResult, run_request
from glove_core.models.base import ModelAdapter
from glove_core.stores.base import StoreAdapter
from glove_core.stores.memory import MemoryStore
from glove_core.subagents import SubAgentFactory, SubAgentRegistry
from glove_core.subscribers import Subscriber, SubscriberSet
from glove_core.tools import Tool
from glove_core.types import ContentPart, new_id

__all__ = ["Glove"]

logger = logging.getLogger(__name__)

# The Gloves whose request is running in the current task (and the tasks it spawned), so a
# tool that calls process_request on its own Glove is caught instead of deadlocking.
_RUNNING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "glove_running", default=frozenset()
)


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
        max_turns: int = 120,
        max_retries: int = 3,
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
        self.max_turns = max_turns
        self.max_retries = max_retries
        self._tools: dict[str, Tool] = {}
        self._subscribers = SubscriberSet()
        self._subagents = SubAgentRegistry(self)
        self._built = False
        self._turn = asyncio.Lock()

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
        """Finish setup; requests may run from now on. Calling it again does nothing."""
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
            signal = AbortController().signal
        await signal.race(self._turn.acquire())
        token = _RUNNING.set(_RUNNING.get() | {id(self)})
        try:
            return await run_request(self, request, signal)
        finally:
            _RUNNING.reset(token)
            self._turn.release()

    def __repr__(self) -> str:
        return (
            f"<Glove model={self._model.name!r} store={self._store.identifier!r} "
            f"tools={len(self._tools)}>"
        )
