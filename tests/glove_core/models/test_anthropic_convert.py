"""Conversion of glove messages to Anthropic blocks: validity, results, media, repairs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glove_core.models._anthropic_convert import (
    PLACEHOLDER_RESULT,
    build_params,
    convert_messages,
    result_text,
)
from glove_core.models.anthropic import AnthropicModel
from glove_core.models.base import ModelRequest
from glove_core.testing import FakeAnthropicAPI, FakeReply, FakeToolUse
from glove_core.testing._validate import validate_messages_request
from glove_core.tools import ToolSpec
from glove_core.types import (
    DocumentPart,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultData,
)
from tests.glove_core.models.conftest import Recorder

PNG = "iVBORw0KGgo="


def _body(messages: list[Message]) -> dict[str, Any]:
    params = build_params(ModelRequest(system="s", tools=[], messages=messages), "5m")
    return {"model": "m", "max_tokens": 10, "system": params.system, "messages": params.messages}


def _call(call_id: str, name: str = "lookup") -> Message:
    return Message(sender="agent", tool_calls=[ToolCall(id=call_id, name=name, input={"k": 1})])


def _results(*results: tuple[str, ToolResultData]) -> Message:
    return Message(
        sender="user",
        tool_results=[ToolResult(call_id=c, name="lookup", result=r) for c, r in results],
    )


def test_error_and_aborted_results_are_flagged_with_readable_text() -> None:
    messages = [
        Message(sender="user", text="go"),
        Message(
            sender="agent",
            tool_calls=[ToolCall(id="a", name="x"), ToolCall(id="b", name="x")],
        ),
        _results(
            ("a", ToolResultData(status="error", message="file not found: /tmp/x")),
            ("b", ToolResultData(status="aborted")),
        ),
    ]
    converted, _ = convert_messages(messages)
    first, second = converted[2]["content"]
    assert first["is_error"] is True and second["is_error"] is True
    assert first["content"][0]["text"] == "Error: file not found: /tmp/x"
    assert "aborted" in second["content"][0]["text"]
    assert "null" not in json.dumps(converted)


def test_success_without_data_is_never_the_string_null() -> None:
    assert result_text(ToolResultData(status="success")) == "(the tool returned no output)"
    assert result_text(ToolResultData(data={"n": None})) == '{"n": null}'
    assert result_text(ToolResultData(status="error", data=None)) != "null"


def test_render_data_is_never_sent_and_media_rides_in_the_result() -> None:
    data = ToolResultData(
        data="see the chart",
        render_data={"secret_ui_state": "RENDER-ONLY"},
        content=[
            ImagePart(media_type="image/png", data=PNG),
            DocumentPart(media_type="application/pdf", data="JVBERi0=", title="report"),
        ],
    )
    body = _body([Message(sender="user", text="chart?"), _call("c1"), _results(("c1", data))])
    assert "RENDER-ONLY" not in json.dumps(body)
    result = body["messages"][2]["content"][0]
    assert [p["type"] for p in result["content"]] == ["text", "image", "document"]
    assert result["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": PNG,
    }
    assert result["content"][2]["title"] == "report"
    assert validate_messages_request(body) is None


def test_consecutive_user_messages_merge_without_losing_media() -> None:
    messages = [
        Message(sender="user", text="first"),
        Message(
            sender="user",
            text="look",
            content=[
                TextPart(text="look"),
                ImagePart(media_type="image/png", url="https://x/y.png"),
            ],
        ),
        Message(sender="user", text="third", framework_context="event"),
    ]
    converted, _ = convert_messages(messages)
    assert len(converted) == 1
    kinds = [b["type"] for b in converted[0]["content"]]
    assert kinds == ["text", "text", "image", "text"]
    assert converted[0]["content"][2]["source"] == {"type": "url", "url": "https://x/y.png"}


def test_dangling_tool_use_gets_a_placeholder_result() -> None:
    body = _body([Message(sender="user", text="go"), _call("lost")])
    assert validate_messages_request(body) is None
    placeholder = body["messages"][-1]["content"][0]
    assert placeholder["tool_use_id"] == "lost" and placeholder["is_error"] is True
    assert placeholder["content"][0]["text"] == PLACEHOLDER_RESULT


def test_duplicate_results_are_dropped_and_orphans_become_text() -> None:
    ok = ToolResultData(data="42")
    body = _body(
        [
            Message(sender="user", text="go"),
            _call("c1"),
            _results(("c1", ok), ("c1", ToolResultData(data="again"))),
            Message(sender="agent", text="done"),
            _results(("ghost", ToolResultData(data="from before a compaction"))),
        ]
    )
    assert validate_messages_request(body) is None
    assert len(body["messages"][2]["content"]) == 1
    orphan = body["messages"][4]["content"][0]
    assert orphan["type"] == "text" and "from before a compaction" in orphan["text"]


def test_results_lead_their_turn_when_a_user_message_came_first() -> None:
    body = _body(
        [
            Message(sender="user", text="go"),
            _call("c1"),
            Message(sender="user", text="an outside event arrived"),
            _results(("c1", ToolResultData(data="ok"))),
        ]
    )
    assert validate_messages_request(body) is None
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]


# -- property tests -----------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
_data = st.one_of(
    st.none(), _text, st.integers(), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)
)
_result_data = st.builds(
    ToolResultData,
    status=st.sampled_from(["success", "error", "aborted"]),
    data=_data,
    message=st.one_of(st.none(), _text),
    render_data=st.just({"ui": "RENDER-ONLY"}),
    content=st.one_of(
        st.none(), st.lists(st.just(ImagePart(media_type="image/png", data=PNG)), max_size=2)
    ),
)


@st.composite
def _conversations(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    call_ids: list[str] = []
    for step in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["user", "agent", "calls", "results", "media"]))
        if kind == "user":
            messages.append(Message(sender="user", text=draw(_text)))
        elif kind == "agent":
            messages.append(Message(sender="agent", text=draw(_text)))
        elif kind == "calls":
            ids = [f"c{step}_{i}" for i in range(draw(st.integers(1, 3)))]
            call_ids.extend(ids)
            calls = [ToolCall(id=i, name="t", input={"n": step}) for i in ids]
            messages.append(Message(sender="agent", text=draw(_text), tool_calls=calls))
        elif kind == "results" and call_ids:
            chosen = draw(st.lists(st.sampled_from(call_ids), max_size=4))
            results = [ToolResult(call_id=c, name="t", result=draw(_result_data)) for c in chosen]
            messages.append(Message(sender="user", tool_results=results))
        else:
            image = ImagePart(media_type="image/png", data=PNG)
            messages.append(
                Message(sender="user", text="pic", content=[TextPart(text="pic"), image])
            )
    if not any(m.sender == "user" and (m.text.strip() or m.content) for m in messages[:1]):
        messages.insert(0, Message(sender="user", text="start"))
    return messages


@settings(max_examples=150, deadline=None)
@given(_conversations())
def test_any_conversation_converts_to_a_request_the_api_accepts(messages: list[Message]) -> None:
    body = _body(messages)
    dumped = json.dumps(body)
    assert "RENDER-ONLY" not in dumped
    if any(m.text.strip() or m.tool_calls or m.tool_results or m.content for m in messages):
        assert validate_messages_request(body) is None, body
    sent_images = dumped.count('"type": "image"')
    saved_images = sum(
        len(m.content or [])
        - sum(isinstance(p, TextPart) for p in m.content or [])
        + sum(
            len(r.result.content or [])
            for r in m.tool_results or []
            if r.call_id in {c.id for a in messages for c in a.tool_calls or []}
        )
        for m in messages
    )
    assert sent_images <= saved_images
    # A result without data is never sent as the JSON text "null" (unless that is its message).
    said = {r.result.message for m in messages for r in (m.tool_results or [])}
    for message in body["messages"]:
        for block in message["content"]:
            if block["type"] == "tool_result" and "null" not in said:
                assert all(p.get("text") != "null" for p in block["content"])


_agent_replies = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1).filter(
            str.strip
        ),
        st.builds(
            FakeToolUse,
            name=st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
            input=st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=8)),
            id=st.uuids().map(lambda u: f"toolu_{u.hex}"),
        ),
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(blocks=_agent_replies)
async def test_replies_round_trip_through_the_wire(
    fake: FakeAnthropicAPI, blocks: list[str | FakeToolUse]
) -> None:
    """glove Message → Anthropic blocks → SSE → SDK → glove Message gives the same message."""
    texts = [b for b in blocks if isinstance(b, str)]
    calls = [
        ToolCall(id=b.id or "", name=b.name, input=b.input)
        for b in blocks
        if isinstance(b, FakeToolUse)
    ]
    original = Message(sender="agent", text="".join(texts), tool_calls=calls or None)
    converted, _ = convert_messages([Message(sender="user", text="q"), original])
    wire: list[str | FakeToolUse] = []
    for block in converted[1]["content"]:
        if block["type"] == "text":
            wire.append(block["text"])
        else:
            wire.append(FakeToolUse(block["name"], block["input"], block["id"]))
    fake.script(FakeReply(tuple(wire)))
    async with AnthropicModel("claude-test", api_key="k", base_url=fake.base_url) as model:
        response = await model.prompt(
            ModelRequest(system="", tools=[], messages=[Message(sender="user", text="q")]),
            Recorder(),
        )
    assert response.message.text == original.text
    assert response.message.tool_calls == original.tool_calls


@settings(max_examples=150, deadline=None)
@given(
    history=_conversations(),
    transient=st.integers(0, 2),
    request_context=st.booleans(),
    tools=st.integers(0, 3),
    anchor=st.one_of(st.none(), st.integers(0, 40)),
    data=st.data(),
)
def test_breakpoints_never_exceed_four_nor_touch_transient_blocks(
    history: list[Message],
    transient: int,
    request_context: bool,
    tools: int,
    anchor: int | None,
    data: st.DataObject,
) -> None:
    rci = data.draw(st.integers(0, len(history))) if request_context else None
    messages = [
        *history,
        *(
            Message(sender="user", text=f"TRANSIENT {i}", framework_context="runtime")
            for i in range(transient)
        ),
    ]
    specs = [ToolSpec(f"t{i}", "d", {"type": "object"}) for i in range(tools)]
    request = ModelRequest(
        system="sys",
        tools=specs,
        messages=messages,
        saved_count=len(history),
        request_context_index=rci,
    )
    params = build_params(request, "5m", anchor)
    body = {
        "model": "m",
        "max_tokens": 1,
        "system": params.system,
        "tools": params.tools,
        "messages": params.messages,
    }
    assert len(params.breakpoints) <= 4
    assert validate_messages_request(body) is None
    for message in params.messages:
        for block in message["content"]:
            if "TRANSIENT" in str(block.get("text", "")):
                assert "cache_control" not in block
    if tools:
        assert params.breakpoints[0] == f"tools.{tools - 1}"
