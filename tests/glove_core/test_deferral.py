"""Which tools are ordinary, deferred or pending at each model call (``glove_core._deferral``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from glove_core import Message, Tool, ToolContext, ToolResult, ToolResultData
from glove_core._deferral import ToolPrefix, attach_references, referenced_tools


async def _noop(arguments: dict[str, Any], ctx: ToolContext) -> str:
    return "ok"


def tools(*names: str) -> list[Tool]:
    return [Tool(name=n, description=n, do=_noop, json_schema={"type": "object"}) for n in names]


def result(call_id: str, *, refs: list[str] | None = None, status: Any = "success") -> ToolResult:
    return ToolResult(
        call_id=call_id,
        name="t",
        result=ToolResultData(status=status, data="x", tool_references=refs),
    )


def results_message(*items: ToolResult) -> Message:
    return Message(sender="user", tool_results=list(items))


USER = Message(sender="user", text="hi")


def test_a_referenced_tool_that_joined_is_deferred_and_the_rest_stay_ordinary() -> None:
    prefix = ToolPrefix()
    first = prefix.plan("c", [USER], tools("a", "b"), joined=set())
    assert [t.name for t in first.tools] == ["a", "b"]
    assert first.deferred == frozenset() and first.pending == ()
    history = [USER, results_message(result("1", refs=["x", "y"]))]
    later = prefix.plan("c", history, tools("a", "b", "x", "y"), joined={"x", "y"})
    assert [t.name for t in later.tools] == ["a", "b", "x", "y"]
    assert later.deferred == {"x", "y"}


def test_a_joined_tool_nothing_references_waits_for_the_next_results() -> None:
    prefix = ToolPrefix()
    prefix.plan("c", [USER], tools("a"), joined=set())
    plan = prefix.plan("c", [USER], tools("a", "new"), joined={"new"})
    assert [t.name for t in plan.tools] == ["a"]
    assert plan.pending == ("new",)
    batch = [result("1"), result("2", status="error")]
    pending = prefix.pending("c", [USER], batch, tools("a", "new"), {"new"})
    loaded = attach_references(batch, pending)
    # The last successful result loads it; a failed one never does.
    assert loaded[0].result.tool_references == ["new"]
    assert loaded[1].result.tool_references is None
    after = prefix.plan("c", [USER, results_message(*loaded)], tools("a", "new"), {"new"})
    assert after.deferred == {"new"} and after.pending == ()


def test_results_that_all_failed_load_nothing_and_the_tool_stays_pending() -> None:
    batch = [result("1", status="error")]
    assert attach_references(batch, ["new"]) is batch


def test_a_tool_folded_mid_conversation_joins_the_cached_prefix_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    prefix = ToolPrefix()
    prefix.plan("c", [USER], tools("a"), joined=set())
    with caplog.at_level(logging.INFO, logger="glove_core._deferral"):
        plan = prefix.plan("c", [USER], tools("a", "folded"), joined=set())
    assert [t.name for t in plan.tools] == ["a", "folded"] and plan.deferred == frozenset()
    assert "'folded' joined the prompt's cached prefix mid-conversation" in caplog.text


def test_after_a_compaction_every_tool_is_ordinary_and_none_is_lost() -> None:
    prefix = ToolPrefix()
    prefix.plan("c", [USER], tools("a"), joined=set())
    loaded = [USER, results_message(result("1", refs=["x"]))]
    assert prefix.plan("c", loaded, tools("a", "x", "p"), {"x", "p"}).deferred == {"x"}
    summary = Message(sender="user", text="summary", is_compaction=True)
    plan = prefix.plan("c", [summary], tools("a", "x", "p"), joined={"x", "p"})
    assert [t.name for t in plan.tools] == ["a", "x", "p"]
    assert plan.deferred == frozenset() and plan.pending == ()


def test_a_restart_defers_the_same_tools_from_the_saved_references() -> None:
    history = [USER, results_message(result("1", refs=["x"]))]
    before = ToolPrefix()
    before.plan("c", [USER], tools("a"), joined=set())
    restarted = ToolPrefix()  # a new Glove: the mount loaded x at start, so nothing "joined"
    assert (
        restarted.plan("c", history, tools("a", "x"), joined=set()).deferred
        == before.plan("c", history, tools("a", "x"), joined={"x"}).deferred
        == {"x"}
    )


def test_every_tool_referenced_is_sent_ordinary_since_the_api_refuses_all_deferred() -> None:
    history = [USER, results_message(result("1", refs=["x"]))]
    plan = ToolPrefix().plan("c", history, tools("x"), joined={"x"})
    assert plan.deferred == frozenset() and [t.name for t in plan.tools] == ["x"]


def test_conversations_are_kept_apart() -> None:
    prefix = ToolPrefix()
    prefix.plan("one", [USER], tools("a"), joined=set())
    assert prefix.plan("two", [USER], tools("a", "j"), joined={"j"}).pending == ()
    assert prefix.plan("one", [USER], tools("a", "j"), joined={"j"}).pending == ("j",)


def test_each_call_reads_only_the_messages_added_since_the_last() -> None:
    prefix = ToolPrefix()
    history = [USER]
    prefix.plan("c", history, tools("a"), joined=set())
    history = [*history, results_message(result("1", refs=["x"]))]
    assert prefix.plan("c", history, tools("a", "x"), {"x"}).deferred == {"x"}
    # A different history (not an extension of the one seen) is read again from the start.
    other = [Message(sender="user", text="other"), results_message(result("2", refs=["y"]))]
    assert prefix.plan("c", other, tools("a", "x", "y"), {"x", "y"}).deferred == {"y"}


def test_references_survive_json_round_trips() -> None:
    message = results_message(result("1", refs=["x", "y"]))
    again = Message.model_validate_json(message.model_dump_json())
    assert again == message
    assert referenced_tools([again]) == {"x", "y"}
