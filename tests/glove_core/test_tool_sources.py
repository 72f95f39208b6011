"""Tool sources: the loop asks them before every model call; names stay unique across them;
switching tools on and off is public and keeps the tool list (and the cached prefix) as it is."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from glove_core import (
    Glove,
    MemoryStore,
    ModelRequest,
    ScriptedModel,
    Tool,
    ToolCall,
    ToolContext,
    ToolSource,
    disable_tools,
    tool,
)
from glove_core.errors import ToolNameConflictError
from glove_core.stores.memory import PlainMemoryStore


def _tool(name: str) -> Tool:
    return Tool(name=name, description=f"the {name} tool", do=lambda i, c: f"{name} ran")


class Shelf:
    """A tool source whose tools change while the agent runs."""

    def __init__(self, *names: str) -> None:
        self.offered = [_tool(n) for n in names]

    def get_tools(self) -> Sequence[Tool]:
        return self.offered


def names(request: ModelRequest) -> list[str]:
    return [t.name for t in request.tools]


async def test_a_source_is_asked_before_every_model_call() -> None:
    shelf = Shelf("lookup")

    @tool
    def stock_up(ctx: ToolContext) -> str:
        """Put another tool on the shelf."""
        shelf.offered.append(_tool("order"))
        return "done"

    model = ScriptedModel(
        [
            [ToolCall(id="c1", name="stock_up")],
            [ToolCall(id="c2", name="order")],
            "ordered",
        ]
    )
    glove = Glove(model=model, system_prompt="s", store=PlainMemoryStore("c"))
    glove.fold(stock_up).build()
    assert isinstance(shelf, ToolSource)
    remove = glove.add_tool_source(shelf)
    result = await glove.process_request("go")
    assert result.text == "ordered"
    assert names(model.requests[0]) == ["stock_up", "lookup"]
    assert names(model.requests[1]) == ["stock_up", "lookup", "order"]  # appended, in order
    [ran] = [r for m in result.messages for r in (m.tool_results or []) if r.name == "order"]
    assert ran.result.data == "order ran"
    assert [t.name for t in glove.tools] == ["stock_up", "lookup", "order"]
    remove()
    assert [t.name for t in glove.tools] == ["stock_up"]


async def test_names_stay_unique_across_sources() -> None:
    glove = Glove(model=ScriptedModel(["x"]), system_prompt="s").fold(_tool("lookup")).build()
    shelf = Shelf("order")
    glove.add_tool_source(shelf)
    with pytest.raises(ToolNameConflictError, match="'order' is already offered"):
        glove.fold(_tool("order"))
    with pytest.raises(ValueError, match="already a tool source"):
        glove.add_tool_source(shelf)
    with pytest.raises(TypeError, match="get_tools"):
        glove.add_tool_source(object())  # type: ignore[arg-type]
    glove.add_tool_source(Shelf("lookup"))
    with pytest.raises(ToolNameConflictError, match="'lookup' is offered by two tool sources"):
        await glove.process_request("hi")
    with pytest.raises(KeyError, match="no tool named 'order' is folded"):
        glove.unfold("order")  # a source's tools are its own


async def test_switch_tools_keeps_the_tool_list_and_answers_calls_inactive() -> None:
    store = PlainMemoryStore("c")
    model = ScriptedModel(
        [[ToolCall(id="c1", name="lookup")], "without it", [ToolCall(id="c2", name="lookup")], "ok"]
    )
    glove = Glove(model=model, system_prompt="s", store=store).build()
    glove.add_tool_source(Shelf("lookup", "order"))

    glove.switch_tools(disable=["lookup"])
    assert glove.pending_context() == [disable_tools(["lookup"])]
    assert await glove.switched_off_tools() == {"lookup"}
    first = await glove.process_request("one")
    (inactive,) = [r.result for m in first.messages for r in (m.tool_results or [])]
    assert inactive.message is not None and inactive.message.startswith("tool_inactive")
    assert glove.pending_context() == []  # saved at the model call
    assert await glove.switched_off_tools() == {"lookup"}  # folded from the saved history

    glove.switch_tools(enable=["lookup"])
    assert await glove.switched_off_tools() == set()
    second = await glove.process_request("two")
    (ran,) = [r.result for m in second.messages for r in (m.tool_results or [])]
    assert ran.status == "success"
    # The tool list never changed, so the provider's cached prefix survives the switches.
    assert {tuple(names(r)) for r in model.requests} == {("lookup", "order")}
    glove.switch_tools()  # nothing to switch: nothing queued
    assert glove.pending_context() == []


async def test_wait_for_wakeups_lets_a_woken_turn_finish() -> None:
    store = MemoryStore()
    glove = Glove(model=ScriptedModel(["noted"]), system_prompt="s", store=store).build()
    outcome = await glove.emit_event(id="e1", source="ci", kind="k", content="x", when_idle="wake")
    assert outcome == "woke"
    await glove.wait_for_wakeups()
    assert [m.text for m in await store.get_messages()][-1] == "noted"
    await glove.wait_for_wakeups()  # nothing scheduled: returns at once
    await glove.aclose()
