"""Deferred tools in the Messages API request: where they go, the breakpoint, the references."""

from __future__ import annotations

import json

from glove_core import Message, ModelRequest, ToolCall, ToolResult, ToolResultData
from glove_core.models._anthropic_convert import build_params
from glove_core.tools import ToolSpec


def spec(name: str) -> ToolSpec:
    return ToolSpec(name, f"the {name} tool", {"type": "object"})


def conversation(refs: list[str] | None) -> list[Message]:
    call = ToolCall(id="c1", name="find", input={})
    loaded = ToolResult(
        call_id="c1", name="find", result=ToolResultData(data="found", tool_references=refs)
    )
    return [
        Message(sender="user", text="hi"),
        Message(sender="agent", tool_calls=[call]),
        Message(sender="user", tool_results=[loaded]),
    ]


def test_deferred_tools_follow_the_ordinary_ones_and_the_cached_part_is_unchanged() -> None:
    before = build_params(
        ModelRequest(system="s", tools=[spec("a"), spec("find")], messages=conversation(None)),
        "5m",
    )
    request = ModelRequest(
        system="s",
        tools=[spec("a"), spec("x"), spec("find"), spec("y")],
        messages=conversation(["x", "y", "a", "ghost"]),
        deferred_tools=frozenset({"x", "y"}),
    )
    after = build_params(request, "5m")
    assert json.dumps(after.tools[:2]) == json.dumps(before.tools)
    assert after.tools[1]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert [(t["name"], t.get("defer_loading")) for t in after.tools[2:]] == [
        ("x", True),
        ("y", True),
    ]
    assert all("cache_control" not in t for t in after.tools[2:])
    block = after.messages[-1]["content"][0]
    # Only deferred tools are referenced: "a" is loaded already, "ghost" offered by nobody.
    assert block["content"][1:] == [
        {"type": "tool_reference", "tool_name": "x"},
        {"type": "tool_reference", "tool_name": "y"},
    ]
