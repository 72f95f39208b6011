"""One pass over a request's starting history (``glove_core._history_facts``) gives the answers
the separate walks gave, and seeds the parts that would walk it again."""

from __future__ import annotations

from typing import Any

from glove_core import Message, Tool, ToolContext, ToolResult, ToolResultData
from glove_core._deferral import ToolPrefix, epoch_marker, referenced_tools
from glove_core._history_facts import history_facts
from glove_core._model_views import ModelViews
from glove_core.context_items import disabled_tools
from glove_core.models.base import without_render_data


async def _noop(arguments: dict[str, Any], ctx: ToolContext) -> str:
    return "ok"


def _results(*data: ToolResultData) -> Message:
    return Message(
        sender="user",
        tool_results=[ToolResult(call_id=f"c{i}", name="t", result=d) for i, d in enumerate(data)],
    )


def _runtime(update: str) -> Message:
    return Message(sender="user", text=update, framework_context="runtime")


SWITCH_OFF = '<context_update source="tool"><tools disable="b,c" /></context_update>'
SWITCH_ON = '<context_update source="app"><tools enable="c" /></context_update>'


def _history(*, render: bool) -> list[Message]:
    return [
        Message(sender="user", text="hi"),
        _runtime(SWITCH_OFF),
        _results(ToolResultData(data="x", tool_references=["x", "y"])),
        Message(sender="agent", text="summary", is_compaction=True),
        _results(
            ToolResultData(data="y", render_data={"ui": 1} if render else None),
            ToolResultData(data="z", tool_references=["z"]),
        ),
        Message(sender="user", text=SWITCH_OFF),  # typed by a user: switches nothing
        _runtime(SWITCH_ON),
        Message(sender="agent", text="second", is_compaction=True),
    ]


def test_the_one_pass_answers_as_the_separate_walks_do() -> None:
    for render in (False, True):
        history = _history(render=render)
        facts = history_facts(history)
        assert facts.references == referenced_tools(history) == {"x", "y", "z"}
        assert facts.epoch == epoch_marker(history) == history[3].id
        assert facts.render_data is (without_render_data(history) is not history) is render
        assert disabled_tools(facts.runtime) == disabled_tools(history) == {"b"}
        assert facts.count == len(history)


def test_an_empty_history_has_no_facts() -> None:
    facts = history_facts([])
    assert (facts.count, facts.render_data, facts.references, facts.epoch) == (
        0,
        False,
        set(),
        None,
    )
    assert facts.runtime == []


def test_seeded_views_extend_by_what_was_added_and_keep_render_data_out() -> None:
    history = _history(render=False)
    views = ModelViews()
    views.seed(history_facts(history))
    added = _results(ToolResultData(data="new", render_data={"ui": 2}))
    history.append(added)
    sent = views.history(history)
    assert sent[:-1] == history[:-1]
    assert sent[-1].tool_results is not None
    assert sent[-1].tool_results[0].result.render_data is None


def test_views_are_not_seeded_from_a_history_with_render_data() -> None:
    history = _history(render=True)
    views = ModelViews()
    views.seed(history_facts(history))
    sent = views.history(history)
    assert all(r.result.render_data is None for m in sent for r in m.tool_results or [])


def test_a_seeded_prefix_plans_as_one_that_walked_the_history() -> None:
    history = _history(render=False)
    offered = [
        Tool(name=n, description=n, do=_noop, json_schema={"type": "object"})
        for n in ("a", "x", "z")
    ]
    walked = ToolPrefix().plan("c", history, offered, joined=set())
    seeded_prefix = ToolPrefix()
    seeded_prefix.seed("c", history_facts(history))
    seeded = seeded_prefix.plan("c", history, offered, joined=set())
    assert seeded.deferred == walked.deferred
    assert [t.name for t in seeded.tools] == [t.name for t in walked.tools]
