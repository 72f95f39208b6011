"""Subagents: child Gloves the model runs through one dispatch tool, ``glove_invoke_subagent``.

Each call builds a fresh child from its factory, forwards the child's events to the parent's
subscribers between ``subagent_invoked`` and ``subagent_completed``, and returns the child's
final text as the tool result. A subscriber tells a child's events from the parent's own with
``forwarding_subagent()``, called inside its ``record``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from glove_core.abort import AbortError, AbortSignal
from glove_core.errors import ToolDefinitionError
from glove_core.result import RequestResult
from glove_core.subscribers import (
    Publish,
    SubagentCompleted,
    SubagentInvoked,
    Subscriber,
    SubscriberEvent,
)
from glove_core.tools import Tool, ToolContext
from glove_core.types import ToolResultData

__all__ = [
    "SUBAGENT_TOOL_NAME",
    "ChildAgent",
    "EventSink",
    "SubAgentFactory",
    "SubAgentRegistry",
    "forwarding_subagent",
    "run_subagent",
]

SUBAGENT_TOOL_NAME = "glove_invoke_subagent"

# The subagents whose event is being delivered right now, innermost first (a grandchild's
# forwarder runs before its parent's). Set only around one
# forwarded ``publish`` call, so nothing else running meanwhile (the parent's own events, a
# sibling subagent in another task) is mistaken for it.
_FORWARDING: ContextVar[tuple[str, ...]] = ContextVar("glove_forwarding_subagent", default=())


def forwarding_subagent() -> str | None:
    """The subagent whose event a subscriber's ``record`` is receiving, or None.

    None means the event is the agent's own. For a subagent's event (a ``TextDelta`` of the
    child's reply, its tool calls) it is the name the subagent was run under, the innermost
    one when subagents nest. Only meaningful inside ``record``.
    """
    path = _FORWARDING.get()
    return path[0] if path else None


class ChildAgent(Protocol):
    """What a subagent factory returns: a ``Glove``, as the dispatch tool uses it."""

    def build(self) -> object:
        """Finish setup (``Glove.build``)."""
        ...

    def add_subscriber(self, subscriber: Subscriber) -> None:
        """Send every event to ``subscriber``."""
        ...

    async def process_request(
        self, request: str, signal: AbortSignal | None = None
    ) -> RequestResult:
        """Run the subagent's one request."""
        ...


class EventSink(Protocol):
    """Where a subagent's events go: the parent ``Glove`` (or anything with ``publish``)."""

    async def publish(self, event: SubscriberEvent) -> None:
        """Send one event to the parent's subscribers."""
        ...


SubAgentFactory = Callable[[], ChildAgent | Awaitable[ChildAgent]]
"""Builds a fresh child Glove for one call."""


class SubagentInput(BaseModel):
    """Input of the dispatch tool."""

    name: str = Field(description="Which subagent to run.")
    prompt: str = Field(
        description="The task for the subagent, self-contained: it does not see this conversation."
    )


@dataclass(frozen=True)
class _SubAgent:
    name: str
    description: str
    factory: SubAgentFactory


class _Forwarder:
    """Passes a child's events on to the parent's subscribers."""

    def __init__(self, publish: Publish, name: str) -> None:
        self._publish = publish
        self._name = name

    async def record(self, event: SubscriberEvent) -> None:
        token = _FORWARDING.set((*_FORWARDING.get(), self._name))
        try:
            await self._publish(event)
        finally:
            _FORWARDING.reset(token)


class SubAgentRegistry:
    """The subagents of one Glove; a tool source offering the dispatch tool once a subagent
    is defined.

    Args:
        parent: where the subagents' events go (the Glove's subscribers).
    """

    def __init__(self, parent: EventSink) -> None:
        self._parent = parent
        self._agents: dict[str, _SubAgent] = {}
        self._tool: Tool | None = None

    @property
    def defined(self) -> bool:
        """Whether any subagent is defined (and the dispatch tool offered)."""
        return bool(self._agents)

    def get_tools(self) -> list[Tool]:
        return [self._tool] if self._tool is not None else []

    def define(self, name: str, description: str, factory: SubAgentFactory) -> None:
        if not name.strip():
            raise ToolDefinitionError("a subagent needs a non-empty name")
        if name in self._agents:
            raise ToolDefinitionError(f"a subagent named {name!r} is already defined")
        if not callable(factory):
            raise ToolDefinitionError(f"subagent {name!r}: factory must be callable")
        self._agents[name] = _SubAgent(name, description, factory)
        # The description lists every subagent, so the tool is rebuilt as subagents are added.
        self._tool = Tool(
            name=SUBAGENT_TOOL_NAME,
            description=self._description(),
            do=self._dispatch,
            input_model=SubagentInput,
        )

    def _description(self) -> str:
        lines = [
            "Run a subagent: a helper agent with its own tools that carries out a self-contained "
            "task and returns its answer. Available subagents:"
        ]
        lines += [f"- {a.name}: {a.description}" for a in self._agents.values()]
        return "\n".join(lines)

    async def _dispatch(self, input: SubagentInput, ctx: ToolContext) -> ToolResultData:
        agent = self._agents.get(input.name)
        if agent is None:
            names = ", ".join(sorted(self._agents))
            return ToolResultData(
                status="error",
                message=f"unknown subagent {input.name!r}; available subagents: {names}",
            )
        try:
            text = await run_subagent(self._parent, agent.name, agent.factory, input.prompt, ctx)
        except AbortError:
            raise
        except Exception as exc:
            return ToolResultData(
                status="error",
                message=f"subagent {agent.name!r} failed: {type(exc).__name__}: {exc}",
            )
        return ToolResultData(status="success", data=text)


async def run_subagent(
    parent: EventSink, name: str, factory: SubAgentFactory, prompt: str, ctx: ToolContext
) -> str:
    """Run a fresh child Glove for one tool call of ``parent`` and return its final text.

    The parent's subscribers see ``subagent_invoked``, then the child's own events, then
    ``subagent_completed``, whatever happens. Whatever the child raises propagates.

    Args:
        parent: the Glove whose tool call this is (its ``publish`` receives the events).
        name: the subagent's name, as the events report it.
        factory: builds the child.
        prompt: the child's request.
        ctx: the tool call's context (its signal aborts the child).
    """
    publish = parent.publish
    await publish(SubagentInvoked(name, prompt, ctx.call_id))
    status: Literal["success", "error", "aborted"] = "error"
    text = ""
    try:
        child = factory()
        if inspect.isawaitable(child):
            child = await child
        child.build()
        child.add_subscriber(_Forwarder(publish, name))
        result = await child.process_request(prompt, signal=ctx.signal)
        text, status = result.text, "success"
        return text
    except AbortError:
        status = "aborted"
        raise
    except Exception as exc:
        text = f"subagent {name!r} failed: {type(exc).__name__}: {exc}"
        raise
    finally:
        await publish(SubagentCompleted(name, ctx.call_id, text, status))
