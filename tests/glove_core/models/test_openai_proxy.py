"""The stand-in tool of OpenAI-compatible requests (``glove_core.models._openai_proxy``)."""

from __future__ import annotations

from typing import Any

import pytest

from glove_core import Message, ModelRequest, ToolCall
from glove_core.models._openai_proxy import (
    PROXY_TOOL_NAME,
    proxied_call,
    tool_definitions,
    unwrap_call,
    uses_proxy,
)
from glove_core.tools import ToolSpec


def spec(name: str) -> ToolSpec:
    return ToolSpec(name, f"the {name} tool", {"type": "object"})


def names(request: ModelRequest) -> list[str]:
    return [t["function"]["name"] for t in tool_definitions(request)]


def test_the_stand_in_is_there_from_the_first_call_and_joined_tools_never_are() -> None:
    hi = [Message(sender="user", text="hi")]
    plain = ModelRequest(system="s", tools=[spec("a")], messages=hi)
    assert names(plain) == ["a"]
    first = ModelRequest(system="s", tools=[spec("a")], messages=hi, tools_may_join=True)
    later = ModelRequest(
        system="s",
        tools=[spec("a"), spec("x")],
        messages=hi,
        deferred_tools=frozenset({"x"}),
        tools_may_join=True,
    )
    assert tool_definitions(first) == tool_definitions(later)
    assert names(later) == ["a", PROXY_TOOL_NAME]


def test_stand_in_calls_become_calls_of_the_named_tool_and_go_back_as_they_came() -> None:
    made = ToolCall(id="1", name=PROXY_TOOL_NAME, input={"name": "x", "arguments": {"q": 1}})
    call = unwrap_call(made)
    assert (call.name, call.input) == ("x", {"q": 1})
    sent = proxied_call(call, {"x"})
    assert sent["function"]["name"] == PROXY_TOOL_NAME
    assert proxied_call(ToolCall(id="2", name="a", input={}), {"x"})["function"]["name"] == "a"


def test_a_stand_in_call_without_a_usable_name_stays_a_stand_in_call() -> None:
    bads: list[dict[str, Any]] = [
        {"arguments": {}},
        {"name": "", "arguments": {}},
        {"name": "x", "arguments": 3},
    ]
    for bad in bads:
        call = ToolCall(id="1", name=PROXY_TOOL_NAME, input=bad)
        assert unwrap_call(call) is call


def test_a_tool_named_like_the_stand_in_is_refused_with_the_fix() -> None:
    request = ModelRequest(
        system="s",
        tools=[spec(PROXY_TOOL_NAME)],
        messages=[Message(sender="user", text="hi")],
        tools_may_join=True,
    )
    with pytest.raises(ValueError, match=r"'glove_call_tool' is reserved .* rename that tool"):
        tool_definitions(request)


def test_stand_in_arguments_may_come_as_json_text_or_not_at_all() -> None:
    text = ToolCall(id="1", name=PROXY_TOOL_NAME, input={"name": "x", "arguments": '{"q": 1}'})
    assert (unwrap_call(text).name, unwrap_call(text).input) == ("x", {"q": 1})
    bare = unwrap_call(ToolCall(id="2", name=PROXY_TOOL_NAME, input={"name": "x"}))
    assert (bare.name, bare.input) == ("x", {})
    garbled = ToolCall(id="3", name=PROXY_TOOL_NAME, input={"name": "x", "arguments": "{oops"})
    assert unwrap_call(garbled) is garbled  # the runner answers it as an unknown tool


def test_only_a_request_offering_the_stand_in_unwraps_its_calls() -> None:
    hi = [Message(sender="user", text="hi")]
    own = ModelRequest(system="s", tools=[spec(PROXY_TOOL_NAME)], messages=hi)
    assert not uses_proxy(own)  # the application's own tool of that name, nothing joins
    assert names(own) == [PROXY_TOOL_NAME]
    joining = ModelRequest(system="s", tools=[spec("a")], messages=hi, tools_may_join=True)
    assert uses_proxy(joining)
