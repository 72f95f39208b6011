"""Subagents: child Gloves the model runs through one dispatch tool, ``glove_invoke_subagent``.

Each call builds a fresh child from its factory, forwards the child's events to the parent's
subscribers between ``subagent_invoked`` and ``subagent_completed``, and returns the child's
final text as the tool result.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from glove_core.abort import AbortError
from glove_core.errors import ToolDefinitionError, ToolNameConflictError
from glove_core.subscribers import SubagentCompleted, SubagentInvoked, SubscriberSet
from glove_core.tools import Tool, ToolContext
from glove_core.types import ToolResultData

if TYPE_CHECKING:
    from glove_core.glove import Glove

__all__ = ["SUBAGENT_TOOL_NAME", "SubAgentFactory", "SubAgentRegistry", "run_subagent"]

SUBAGENT_TOOL_NAME = "glove_invoke_subagent"

SubAgentFactory = Callable[[], "Glove | Awaitable[Glove]"]
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

    def __init__(self, parent: SubscriberSet) -> None:
        self._parent = parent

    async def record(self, event_type: str, data: Any) -> None:
        await self._parent.emit(event_type, data)


class SubAgentRegistry:
    """The subagents of one Glove and the dispatch tool that runs them."""

    def __init__(self, glove: Glove) -> None:
        self._glove = glove
        self._agents: dict[str, _SubAgent] = {}

    def define(self, name: str, description: str, factory: SubAgentFactory) -> None:
        if not name.strip():
            raise ToolDefinitionError("a subagent needs a non-empty name")
        if name in self._agents:
            raise ToolDefinitionError(f"a subagent named {name!r} is already defined")
        if not callable(factory):
            raise ToolDefinitionError(f"subagent {name!r}: factory must be callable")
        tools = self._glove._tools
        existing = tools.get(SUBAGENT_TOOL_NAME)
        if existing is not None and not self._agents:
            raise ToolNameConflictError(SUBAGENT_TOOL_NAME)
        self._agents[name] = _SubAgent(name, description, factory)
        # The description lists every subagent, so the tool is rebuilt as subagents are added.
        tools[SUBAGENT_TOOL_NAME] = Tool(
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
            text = await run_subagent(self._glove, agent.name, agent.factory, input.prompt, ctx)
        except AbortError:
            raise
        except Exception as exc:
            return ToolResultData(
                status="error",
                message=f"subagent {agent.name!r} failed: {type(exc).__name__}: {exc}",
            )
        return ToolResultData(status="success", data=text)


async def run_subagent(
    parent: Glove, name: str, factory: SubAgentFactory, prompt: str, ctx: ToolContext
) -> str:
    """Run a fresh child Glove for one tool call of ``parent`` and return its final text.

    The parent's subscribers see ``subagent_invoked``, then the child's own events, then
    ``subagent_completed``, whatever happens. Whatever the child raises propagates.
    """
    events = parent._subscribers
    await events.emit("subagent_invoked", SubagentInvoked(name, prompt, ctx.call_id))
    status: Literal["success", "error", "aborted"] = "error"
    text = ""
    try:
        child = factory()
        if inspect.isawaitable(child):
            child = await child
        child.build()
        child.add_subscriber(_Forwarder(events))
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
        await events.emit("subagent_completed", SubagentCompleted(name, ctx.call_id, text, status))
