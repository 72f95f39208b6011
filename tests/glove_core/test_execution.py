"""The execution seam (``Glove(execution=)``, ``TurnSteps``) with an execution written here: it
keeps each step's outcome in memory and, on a second run of the same turn, hands the recorded
outcomes back instead of running the steps (what a durable execution does after a crash)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from glove_core import Glove, MemoryStore, ScriptedModel, ToolCall, tool
from glove_core.event_queue import OutsideEvent
from glove_core.execution import Execution, Turn
from glove_core.result import RequestResult
from glove_core.steps import ToolStep, TurnSteps
from glove_core.types import Message, ToolResult

RAN: list[str] = []


@tool
async def file_issue(title: str) -> str:
    """File an issue.

    Args:
        title: its title.
    """
    RAN.append(title)
    return f"filed {title}"


class Recorded:
    """A ``TurnSteps`` that records outcomes by step number, or replays the recorded ones."""

    def __init__(self, outcomes: list[tuple[str, Any]], *, replay: bool) -> None:
        self.outcomes = outcomes
        self.replay = replay
        self.position = 0

    async def _next(self, name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        index, self.position = self.position, self.position + 1
        if self.replay:
            recorded_name, value = self.outcomes[index]
            assert recorded_name == name
            return value
        value = await fn()
        self.outcomes.append((name, value))
        return value

    async def step(self, name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        return await self._next(name, fn)

    async def tool_calls(self, steps: Sequence[ToolStep], *, parallel: bool) -> list[ToolResult]:
        results: list[ToolResult] = []
        for step in steps:
            refused = await self._next("prepare", step.prepare)
            results.append(refused or await self._next("invoke", step.invoke))
        return results

    def first_live_step(self) -> bool:
        return False


class RecordingExecution:
    """Runs every turn through ``Recorded`` steps; ``replay`` switches to handing them back."""

    def __init__(self) -> None:
        self.outcomes: list[tuple[str, Any]] = []
        self.replay = False

    async def run_turn(
        self, turn: Turn, request: Message, events: list[OutsideEvent] | None
    ) -> RequestResult:
        steps: TurnSteps = Recorded(self.outcomes, replay=self.replay)
        return await turn.run(request, events, steps)

    async def resume_turns(self, turn: Turn) -> int:
        return 0


def glove(execution: Execution, replies: list[Any]) -> Glove:
    agent = Glove(
        model=ScriptedModel(replies),
        system_prompt="test",
        store=MemoryStore("c"),
        execution=execution,
    )
    agent.fold(file_issue)
    return agent.build()


async def test_a_turn_runs_as_steps_in_a_fixed_order() -> None:
    execution = RecordingExecution()
    call = ToolCall(id="c1", name="file_issue", input={"title": "a"})
    result = await glove(execution, [[call], "done"]).process_request("file it")
    assert result.text == "done"
    assert [name for name, _ in execution.outcomes] == [
        "glove.position",
        "glove.start",
        "glove.model",
        "prepare",
        "invoke",
        "glove.results",
        "glove.model",
    ]


async def test_a_replayed_turn_calls_neither_the_model_nor_the_tools() -> None:
    RAN.clear()
    execution = RecordingExecution()
    call = ToolCall(id="c1", name="file_issue", input={"title": "a"})
    first = await glove(execution, [[call], "done"]).process_request("file it")
    assert RAN == ["a"]
    execution.replay = True
    # An empty script: any model call would fail; the tool would append to RAN.
    again = await glove(execution, []).process_request("file it")
    assert RAN == ["a"]
    assert again.text == first.text == "done"
    assert [m.id for m in again.messages] == [m.id for m in first.messages]
    assert again.usage == first.usage


class GivenSteps:
    """An execution that runs the turn through the steps it was given."""

    def __init__(self, steps: TurnSteps) -> None:
        self.steps = steps

    async def run_turn(
        self, turn: Turn, request: Message, events: list[OutsideEvent] | None
    ) -> RequestResult:
        return await turn.run(request, events, self.steps)

    async def resume_turns(self, turn: Turn) -> int:
        return 0


class Crash(Exception):
    """The process 'dies' after a step ran and before its outcome was recorded."""


class CrashingAfter(Recorded):
    """Records like ``Recorded``, but dies right after running step number ``at``."""

    def __init__(self, outcomes: list[tuple[str, Any]], at: int) -> None:
        super().__init__(outcomes, replay=False)
        self.at = at

    async def _next(self, name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        if self.position == self.at:
            await fn()
            raise Crash(name)
        return await super()._next(name, fn)


class Resuming(Recorded):
    """Replays what was recorded, then runs live; the first live step is told so."""

    def __init__(self, outcomes: list[tuple[str, Any]]) -> None:
        super().__init__(outcomes, replay=True)
        self.first_live = True

    async def _next(self, name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        if self.position < len(self.outcomes):
            return await super()._next(name, fn)
        self.position += 1
        return await fn()

    def first_live_step(self) -> bool:
        first, self.first_live = self.first_live, False
        return first


async def test_a_save_made_by_a_step_that_was_not_recorded_is_kept_not_repeated() -> None:
    RAN.clear()
    store = MemoryStore("c")
    call = ToolCall(id="c1", name="file_issue", input={"title": "a"})
    outcomes: list[tuple[str, Any]] = []

    async def turn(steps: TurnSteps, replies: list[Any]) -> RequestResult:
        agent = Glove(
            model=ScriptedModel(replies),
            system_prompt="test",
            store=store,
            execution=GivenSteps(steps),
        )
        agent.fold(file_issue)
        return await agent.build().process_request("file it")

    # Dies after the first model step saved its reply (step 2), before recording it.
    with pytest.raises(Crash):
        await turn(CrashingAfter(outcomes, at=2), [[call]])
    assert [m.sender for m in await store.get_messages()] == ["user", "agent"]
    # Resumed: the saved reply is kept (no second model call for it), the tool runs once.
    result = await turn(Resuming(outcomes), ["done"])
    assert result.text == "done" and RAN == ["a"]
    messages = await store.get_messages()
    assert [m.sender for m in messages] == ["user", "agent", "user", "agent"]
    assert messages[1].tool_calls == [call]
