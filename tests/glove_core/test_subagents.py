"""Subagents: the dispatch tool, event bracketing, errors."""

from __future__ import annotations

from glove_core import Glove, MemoryStore, ScriptedModel, ToolCall, ToolResultData, tool
from glove_core.subagents import SUBAGENT_TOOL_NAME, forwarding_subagent
from glove_core.subscribers import SubagentCompleted, SubagentInvoked, SubscriberEvent
from glove_core.testing import RecordingSubscriber


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: the key.
    """
    return f"value of {key}"


def dispatch(name: str, prompt: str, call_id: str = "d1") -> ToolCall:
    return ToolCall(id=call_id, name=SUBAGENT_TOOL_NAME, input={"name": name, "prompt": prompt})


async def test_subagent_runs_and_parent_sees_bracketed_events() -> None:
    child_model = ScriptedModel([[ToolCall(id="k1", name="lookup", input={"key": "x"})], "x is 42"])
    built: list[Glove] = []

    def factory() -> Glove:
        child = Glove(model=child_model, system_prompt="researcher").fold(lookup)
        built.append(child)
        return child

    parent_store = MemoryStore()
    parent_model = ScriptedModel([[dispatch("research", "find x")], "The answer is 42."])
    parent = Glove(model=parent_model, system_prompt="main", store=parent_store)
    parent.define_sub_agent("research", "Looks things up.", factory).build()
    recorder = RecordingSubscriber()
    parent.add_subscriber(recorder)

    result = await parent.process_request("what is x?")

    assert result.text == "The answer is 42."
    spec = next(t for t in parent_model.requests[0].tools if t.name == SUBAGENT_TOOL_NAME)
    assert spec.name == SUBAGENT_TOOL_NAME
    assert "- research: Looks things up." in spec.description
    assert spec.input_schema["required"] == ["name", "prompt"]
    results = (await parent_store.get_messages())[2].tool_results
    assert results is not None and results[0].result == ToolResultData(data="x is 42")
    names = recorder.names()
    start, end = names.index("subagent_invoked"), names.index("subagent_completed")
    # The child's own events sit between the brackets.
    assert "tool_use_result" in names[start:end]
    assert recorder.events[start] == SubagentInvoked("research", "find x", "d1")
    assert recorder.events[end] == SubagentCompleted("research", "d1", "x is 42", "success")
    assert child_model.requests[0].messages[0].text == "find x"
    assert len(built) == 1


async def test_each_call_builds_a_fresh_child() -> None:
    built: list[Glove] = []

    async def factory() -> Glove:
        child = Glove(model=ScriptedModel([f"reply {len(built)}"]), system_prompt="c")
        built.append(child)
        return child

    parent = Glove(
        model=ScriptedModel([[dispatch("helper", "a"), dispatch("helper", "b", "d2")], "ok"]),
        system_prompt="p",
    )
    parent.define_sub_agent("helper", "Helps.", factory).build()
    await parent.process_request("go")
    assert len(built) == 2
    assert built[0] is not built[1]


async def test_unknown_subagent_and_failing_factory_are_error_results() -> None:
    def broken() -> Glove:
        raise RuntimeError("no model configured")

    store = MemoryStore()
    recorder = RecordingSubscriber()
    parent = Glove(
        model=ScriptedModel([[dispatch("ghost", "x"), dispatch("broken", "y", "d2")], "ok"]),
        system_prompt="p",
        store=store,
    )
    parent.define_sub_agent("broken", "Fails.", broken).build()
    parent.add_subscriber(recorder)
    await parent.process_request("go")
    results = (await store.get_messages())[2].tool_results
    assert results is not None
    ghost, failed = (r.result for r in results)
    assert ghost.status == "error" and ghost.message is not None
    assert ghost.message == "unknown subagent 'ghost'; available subagents: broken"
    assert failed.status == "error" and failed.message is not None
    assert "RuntimeError: no model configured" in failed.message
    completed = recorder.of("subagent_completed")
    assert [c.status for c in completed] == ["error"]


async def test_defining_a_second_subagent_updates_the_description() -> None:
    parent = Glove(model=ScriptedModel(["ok"]), system_prompt="p")
    parent.define_sub_agent("a", "First.", lambda: parent)
    parent.define_sub_agent("b", "Second.", lambda: parent)
    dispatch_tool = next(t for t in parent.tools if t.name == SUBAGENT_TOOL_NAME)
    assert "- a: First." in dispatch_tool.description
    assert "- b: Second." in dispatch_tool.description


class _Sources:
    """Records each event's kind with the subagent ``forwarding_subagent`` names for it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    async def record(self, event: SubscriberEvent) -> None:
        self.seen.append((event.kind, forwarding_subagent()))


async def test_a_subscriber_tells_nested_subagents_events_from_the_agents_own() -> None:
    def inner() -> Glove:
        return Glove(model=ScriptedModel(["inner text"]), system_prompt="inner")

    def outer() -> Glove:
        child = Glove(
            model=ScriptedModel([[dispatch("inner", "go", "d2")], "outer text"]),
            system_prompt="outer",
        )
        return child.define_sub_agent("inner", "The inner one.", inner)

    parent = Glove(
        model=ScriptedModel([[dispatch("outer", "go")], "main text"]), system_prompt="main"
    )
    parent.define_sub_agent("outer", "The outer one.", outer).build()
    sources = _Sources()
    parent.add_subscriber(sources)

    await parent.process_request("start")

    deltas = [who for kind, who in sources.seen if kind == "text_delta"]
    assert deltas == ["inner", "outer", None]  # the innermost subagent names its own text
    # The brackets are the parent's own events for the outer call; nothing is left set after.
    assert ("subagent_invoked", None) in sources.seen
    assert forwarding_subagent() is None
