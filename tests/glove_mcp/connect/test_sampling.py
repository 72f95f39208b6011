"""Answering a server's sampling/createMessage with a model adapter: conversion both ways, the
token cap, approval through a display manager, failures and events; then end to end against a
real MCP server whose tool samples."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer

from glove_core import (
    AbortController,
    DisplayManager,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    ScriptedModel,
    Slot,
    TextPart,
    ToolCall,
    Usage,
)
from glove_core.abort import AbortSignal
from glove_core.subscribers import Notify
from glove_mcp.connect.sampling import (
    DEFAULT_SAMPLING_MAX_TOKENS,
    SAMPLING_CAPABILITY,
    SAMPLING_RENDERER,
    USER_REJECTED,
    SamplingAnswer,
    answer_sampling,
)
from glove_mcp.subscribers import McpSampling
from glove_mcp.testing import serve

PNG = "iVBORw0KGgo="
SEARCH = types.Tool(
    name="notes.search",
    description="Search the notes.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
)


def _text(role: types.Role, text: str) -> types.SamplingMessage:
    return types.SamplingMessage(role=role, content=types.TextContent(text=text))


def _params(*messages: types.SamplingMessage, **options: Any) -> types.CreateMessageRequestParams:
    options.setdefault("max_tokens", 200)
    return types.CreateMessageRequestParams(messages=list(messages), **options)


class Events:
    """Collects the published McpSampling events."""

    def __init__(self) -> None:
        self.events: list[McpSampling] = []

    async def __call__(self, event: McpSampling) -> None:
        self.events.append(event)

    @property
    def only(self) -> McpSampling:
        assert len(self.events) == 1, self.events
        return self.events[0]


@pytest.fixture
def events() -> Events:
    return Events()


def _answering(display: DisplayManager, answer: Any, seen: list[Slot]) -> None:
    """Resolve every mcp_sampling slot with ``answer``, as an application's UI would."""

    def on_change(slots: list[Slot]) -> None:
        for slot in slots:
            if slot.renderer == SAMPLING_RENDERER and slot.kind == "wait":
                seen.append(slot)
                display.resolve(slot.id, answer)

    display.subscribe(on_change)


# --- conversion ---------------------------------------------------------------------------


async def test_text_request_is_a_separate_model_call(events: Events) -> None:
    model = ScriptedModel(["A short summary."], name="scripted:test")
    params = _params(
        _text("user", "Summarise this."),
        _text("assistant", "Which part?"),
        _text("user", "All of it."),
        system_prompt="You summarise.",
    )
    result = await answer_sampling("notes", params, model=model, publish=events)

    assert isinstance(result, types.CreateMessageResult)
    assert result.role == "assistant" and result.model == "scripted:test"
    assert result.content == types.TextContent(text="A short summary.")
    assert result.stop_reason == "endTurn"
    (request,) = model.requests
    assert request.system == "You summarise." and request.tools == []
    assert [(m.sender, m.text) for m in request.messages] == [
        ("user", "Summarise this."),
        ("agent", "Which part?"),
        ("user", "All of it."),
    ]
    assert request.conversation_id == "mcp-sampling:notes"
    assert events.only.outcome == "answered" and events.only.model == "scripted:test"
    assert events.only.input_tokens > 0 and events.only.output_tokens > 0


async def test_images_pass_and_audio_becomes_a_placeholder() -> None:
    model = ScriptedModel(["ok"])
    params = _params(
        types.SamplingMessage(
            role="user",
            content=[
                types.TextContent(text="What is this?"),
                types.ImageContent(data=PNG, mime_type="image/png"),
                types.AudioContent(data="UklGRg==", mime_type="audio/wav"),
            ],
        ),
        types.SamplingMessage(
            role="assistant", content=types.ImageContent(data=PNG, mime_type="image/jpeg")
        ),
        _text("user", "And now?"),
    )
    assert isinstance(await answer_sampling("s", params, model=model), types.CreateMessageResult)
    user, agent, _ = model.requests[0].messages
    assert user.content is not None
    assert user.content[0] == TextPart(text="What is this?")
    assert user.content[1] == ImagePart(media_type="image/png", data=PNG)
    assert "audio (audio/wav)" in user.text and "What is this?" in user.text
    # Providers take images from the user side only: the assistant's becomes text.
    assert agent.content is None and "image (image/jpeg)" in agent.text


def _tool_history() -> list[types.SamplingMessage]:
    return [
        _text("user", "Find the launch notes."),
        types.SamplingMessage(
            role="assistant",
            content=[
                types.TextContent(text="Searching."),
                types.ToolUseContent(id="call-1", name="notes.search", input={"q": "launch"}),
                types.ToolUseContent(id="call-2", name="notes.search", input={"q": "plan"}),
            ],
        ),
        types.SamplingMessage(
            role="user",
            content=[
                types.ToolResultContent(
                    tool_use_id="call-1",
                    content=[
                        types.TextContent(text="page 7: launch on Monday"),
                        types.ImageContent(data=PNG, mime_type="image/png"),
                    ],
                ),
                types.ToolResultContent(
                    tool_use_id="call-2",
                    content=[types.TextContent(text="index unavailable")],
                    is_error=True,
                ),
            ],
        ),
    ]


async def test_tool_use_and_results_both_ways(events: Events) -> None:
    def reply(request: ModelRequest) -> Message:
        return Message(
            sender="agent",
            text="One more search.",
            tool_calls=[ToolCall(id="call-3", name="notes_search", input={"q": "date"})],
        )

    model = ScriptedModel([reply])
    params = _params(*_tool_history(), tools=[SEARCH])
    result = await answer_sampling("notes", params, model=model, publish=events)

    (request,) = model.requests
    (spec,) = request.tools
    # MCP allows dots in tool names; the providers do not.
    assert spec.name == "notes_search" and spec.description == "Search the notes."
    assert spec.input_schema == SEARCH.input_schema
    _, agent, results = request.messages
    assert agent.text == "Searching."
    assert agent.tool_calls == [
        ToolCall(id="call-1", name="notes_search", input={"q": "launch"}),
        ToolCall(id="call-2", name="notes_search", input={"q": "plan"}),
    ]
    assert results.tool_results is not None
    found, failed = results.tool_results
    assert found.call_id == "call-1" and found.name == "notes_search"
    assert found.result.status == "success" and found.result.data == "page 7: launch on Monday"
    assert found.result.content == [ImagePart(media_type="image/png", data=PNG)]
    assert failed.result.status == "error" and failed.result.message == "index unavailable"

    assert isinstance(result, types.CreateMessageResultWithTools)
    assert result.stop_reason == "toolUse"
    assert result.content_as_list == [
        types.TextContent(text="One more search."),
        types.ToolUseContent(id="call-3", name="notes.search", input={"q": "date"}),
    ]
    assert events.only.outcome == "answered"


async def test_tools_with_a_text_reply_end_the_turn() -> None:
    model = ScriptedModel(["Launch is on Monday."])
    result = await answer_sampling("notes", _params(*_tool_history(), tools=[SEARCH]), model=model)
    assert isinstance(result, types.CreateMessageResultWithTools)
    assert result.stop_reason == "endTurn"
    assert result.content_as_list == [types.TextContent(text="Launch is on Monday.")]


async def test_tool_choice_none_offers_no_tools_and_drops_tool_calls() -> None:
    model = ScriptedModel([[ToolCall(id="c", name="notes_search", input={})]])
    params = _params(*_tool_history(), tools=[SEARCH], tool_choice=types.ToolChoice(mode="none"))
    result = await answer_sampling("notes", params, model=model)

    (request,) = model.requests
    assert request.tools == []
    # Providers refuse tool blocks when no tools are offered, so the history says it in text.
    _, agent, results = request.messages
    assert agent.tool_calls is None and "called tool notes.search (call-1)" in agent.text
    assert results.tool_results is None
    assert "[result of tool call call-1] page 7" in results.text
    assert "[error of tool call call-2] index unavailable" in results.text
    assert isinstance(result, types.CreateMessageResultWithTools)
    assert result.stop_reason == "endTurn"
    assert result.content_as_list == [types.TextContent(text="")]


async def test_tool_choice_required_is_asked_for_in_the_system_prompt() -> None:
    model = ScriptedModel(["ok", "ok"])
    required = types.ToolChoice(mode="required")
    await answer_sampling(
        "s", _params(_text("user", "go"), tools=[SEARCH], tool_choice=required), model=model
    )
    await answer_sampling(
        "s",
        _params(_text("user", "go"), tools=[SEARCH], tool_choice=required, system_prompt="Be."),
        model=model,
    )
    first, second = model.requests
    assert "calling at least one of the tools" in first.system
    assert second.system.startswith("Be.\n\n") and "at least one" in second.system


async def test_tool_calls_without_tools_offered_are_dropped() -> None:
    model = ScriptedModel(
        [Message(sender="agent", text="hi", tool_calls=[ToolCall(id="x", name="y")])]
    )
    result = await answer_sampling("s", _params(_text("user", "hello")), model=model)
    assert isinstance(result, types.CreateMessageResult)
    assert result.content == types.TextContent(text="hi") and result.stop_reason == "endTurn"


async def test_clashing_tool_names_stay_apart() -> None:
    dotted = SEARCH
    underscored = SEARCH.model_copy(update={"name": "notes_search"})
    model = ScriptedModel([[ToolCall(id="c", name="notes_search_2", input={})]])
    result = await answer_sampling(
        "s", _params(_text("user", "go"), tools=[dotted, underscored]), model=model
    )
    assert [t.name for t in model.requests[0].tools] == ["notes_search", "notes_search_2"]
    assert isinstance(result, types.CreateMessageResultWithTools)
    assert result.content_as_list == [types.ToolUseContent(id="c", name="notes_search", input={})]


class _StoppingModel:
    """A model adapter whose replies stop for the given provider reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    @property
    def name(self) -> str:
        return "stopping"

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        return ModelResponse(Message(sender="agent", text="cut"), Usage(), self.reason)


@pytest.mark.parametrize(
    ("provider", "mcp"),
    [("max_tokens", "maxTokens"), ("length", "maxTokens"), ("stop_sequence", "stopSequence")],
)
async def test_stop_reasons_in_mcp_words(provider: str, mcp: str) -> None:
    result = await answer_sampling("s", _params(_text("user", "x")), model=_StoppingModel(provider))
    assert isinstance(result, types.CreateMessageResult) and result.stop_reason == mcp


# --- the token cap ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "cap", "sent"),
    [
        (10_000, DEFAULT_SAMPLING_MAX_TOKENS, DEFAULT_SAMPLING_MAX_TOKENS),
        (300, 4096, 300),
        (10_000, None, 10_000),
        (10_000, 50, 50),
    ],
)
async def test_the_smaller_of_max_tokens_and_the_cap_is_asked_for(
    asked: int, cap: int | None, sent: int
) -> None:
    model = ScriptedModel(["ok"])
    params = _params(_text("user", "x"), max_tokens=asked)
    await answer_sampling("s", params, model=model, max_tokens=cap)
    assert model.requests[0].max_tokens == sent


async def test_the_default_cap_applies_when_none_is_given() -> None:
    model = ScriptedModel(["ok"])
    await answer_sampling("s", _params(_text("user", "x"), max_tokens=1_000_000), model=model)
    assert model.requests[0].max_tokens == DEFAULT_SAMPLING_MAX_TOKENS == 4096


async def test_impossible_token_limits_are_errors_not_exceptions(events: Events) -> None:
    model = ScriptedModel(["ok"])
    bad_request = await answer_sampling(
        "s", _params(_text("user", "x"), max_tokens=0), model=model, publish=events
    )
    bad_cap = await answer_sampling("s", _params(_text("user", "x")), model=model, max_tokens=0)
    assert isinstance(bad_request, types.ErrorData) and bad_request.code == types.INVALID_PARAMS
    assert "maxTokens must be at least 1" in bad_request.message
    assert isinstance(bad_cap, types.ErrorData) and "token cap" in bad_cap.message
    assert model.requests == [] and events.only.outcome == "refused"


# --- approval -----------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [True, {"approved": True}])
async def test_approval_granted_then_answered(answer: Any, events: Events) -> None:
    display = DisplayManager()
    seen: list[Slot] = []
    _answering(display, answer, seen)
    model = ScriptedModel(["approved reply"], name="scripted:ask")
    params = _params(
        _tool_history()[0],
        types.SamplingMessage(
            role="user",
            content=[
                types.TextContent(text="Look:"),
                types.ImageContent(data=PNG, mime_type="image/png"),
            ],
        ),
        system_prompt="You help.",
        tools=[SEARCH],
        max_tokens=9000,
    )
    result = await answer_sampling(
        "notes", params, model=model, approve=display, publish=events, max_tokens=1000
    )

    assert isinstance(result, types.CreateMessageResultWithTools)
    (slot,) = seen
    assert slot.input == {
        "server": "notes",
        "model": "scripted:ask",
        "system_prompt": "You help.",
        "messages": [
            {"role": "user", "text": "Find the launch notes."},
            {"role": "user", "text": "Look:\n[image (image/png)]"},
        ],
        "max_tokens": 1000,
        "tools": ["notes.search"],
    }
    assert display.slots == [] and events.only.outcome == "answered"


@pytest.mark.parametrize("answer", [False, {"approved": False}, "yes", None])
async def test_approval_refused_never_calls_the_model(answer: Any, events: Events) -> None:
    display = DisplayManager()
    _answering(display, answer, [])
    model = ScriptedModel(["never"])
    result = await answer_sampling(
        "notes", _params(_text("user", "x")), model=model, approve=display, publish=events
    )
    assert isinstance(result, types.ErrorData) and result.code == USER_REJECTED == -1
    assert result.message == "User rejected sampling request"
    assert model.requests == []
    assert events.only.outcome == "refused" and events.only.model is None
    assert events.only.detail == "the user rejected the sampling request"


async def test_rejecting_the_slot_is_a_refusal_whose_reason_stays_local(events: Events) -> None:
    display = DisplayManager()

    def on_change(slots: list[Slot]) -> None:
        for slot in slots:
            display.reject(slot.id, "too expensive today")

    display.subscribe(on_change)
    result = await answer_sampling(
        "notes",
        _params(_text("user", "x")),
        model=ScriptedModel([]),
        approve=display,
        publish=events,
    )
    assert isinstance(result, types.ErrorData) and result.code == USER_REJECTED
    assert "too expensive" not in result.message
    assert events.only.detail == "the user rejected the sampling request: too expensive today"


async def test_abort_while_waiting_for_approval(events: Events) -> None:
    display = DisplayManager()
    controller = AbortController()
    display.subscribe(lambda slots: controller.abort("closing") if slots else None)
    result = await answer_sampling(
        "notes",
        _params(_text("user", "x")),
        model=ScriptedModel([]),
        approve=display,
        publish=events,
        signal=controller.signal,
    )
    assert isinstance(result, types.ErrorData) and result.code == types.INTERNAL_ERROR
    assert "aborted" in result.message and events.only.outcome == "failed"
    assert display.slots == []


# --- failures and events ------------------------------------------------------------------


async def test_model_failure_is_an_error_without_secrets(
    events: Events, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(request: ModelRequest) -> str:
        raise RuntimeError("upstream said no to key sk-live-SECRET")

    with caplog.at_level(logging.INFO, logger="glove_mcp"):
        result = await answer_sampling(
            "notes", _params(_text("user", "x")), model=ScriptedModel([explode]), publish=events
        )
    assert isinstance(result, types.ErrorData) and result.code == types.INTERNAL_ERROR
    assert "could not answer" in result.message and "RuntimeError" in result.message
    assert events.only.outcome == "failed" and events.only.model == "scripted"
    for text in (result.message, str(result.data), str(events.only), caplog.text):
        assert "sk-live-SECRET" not in text


async def test_our_own_model_errors_reach_subscribers_in_full(events: Events) -> None:
    result = await answer_sampling(
        "notes", _params(_text("user", "last words")), model=ScriptedModel([]), publish=events
    )
    assert isinstance(result, types.ErrorData) and "last words" not in result.message
    assert events.only.detail is not None
    assert events.only.detail.startswith("ScriptExhaustedError: ScriptedModel has no reply left")


async def test_abort_during_the_model_call() -> None:
    controller = AbortController()
    controller.abort("shutdown")
    model = ScriptedModel(["late"])
    result = await answer_sampling(
        "s", _params(_text("user", "x")), model=model, signal=controller.signal
    )
    assert isinstance(result, types.ErrorData) and "aborted" in result.message
    assert model.requests == []


async def test_a_failing_publisher_does_not_fail_the_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(event: McpSampling) -> None:
        raise RuntimeError("subscriber down")

    result = await answer_sampling(
        "s", _params(_text("user", "x")), model=ScriptedModel(["ok"]), publish=broken
    )
    assert isinstance(result, types.CreateMessageResult)
    assert "publishing an mcp_sampling event failed" in caplog.text


async def test_settings_a_model_request_cannot_carry_are_logged_not_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    params = _params(
        _text("user", "x"),
        include_context="allServers",
        temperature=0.2,
        stop_sequences=["END"],
        model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="sonnet")]),
        metadata={"trace": "1"},
    )
    with caplog.at_level(logging.DEBUG, logger="glove_mcp.connect.sampling"):
        result = await answer_sampling("s", params, model=ScriptedModel(["ok"]))
    assert isinstance(result, types.CreateMessageResult)
    for name in ("includeContext", "temperature", "stopSequences", "modelPreferences", "metadata"):
        assert name in caplog.text


def test_the_capability_declares_tools_but_not_context() -> None:
    assert SAMPLING_CAPABILITY.tools is not None and SAMPLING_CAPABILITY.context is None


# --- end to end against a real MCP server -------------------------------------------------


def _sampling_server() -> MCPServer:
    server = MCPServer("sampler", log_level="WARNING")

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:
        """Summarise text with the client's model."""
        # send_request, not the deprecated create_message wrapper (warnings are errors here).
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[_text("user", f"Summarise: {text}")],
                system_prompt="You write one-line summaries.",
                max_tokens=50_000,
            )
        )
        result = await ctx.session.send_request(request, types.CreateMessageResult)
        assert isinstance(result.content, types.TextContent)
        return f"summary by {result.model}: {result.content.text}"

    @server.tool()
    async def pick_tool(ctx: Context) -> str:
        """Ask the client's model which of the server's tools to use."""
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[_text("user", "Find the launch date.")],
                max_tokens=100,
                tools=[SEARCH],
            )
        )
        result = await ctx.session.send_request(request, types.CreateMessageResultWithTools)
        uses = [b for b in result.content_as_list if isinstance(b, types.ToolUseContent)]
        return f"{result.stop_reason}: " + ", ".join(f"{u.name}({u.input})" for u in uses)

    return server


@pytest.fixture
async def sampler_url() -> AsyncIterator[str]:
    async with serve(_sampling_server()) as url:
        yield url


async def _call(url: str, model: ScriptedModel, tool: str, args: dict[str, Any]) -> str:
    async def on_sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> SamplingAnswer:
        return await answer_sampling("sampler", params, model=model, max_tokens=1000)

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(
            read, write, sampling_callback=on_sampling, sampling_capabilities=SAMPLING_CAPABILITY
        ) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, args)
    assert not result.is_error, result.content
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_end_to_end_a_server_tool_samples_the_clients_model(sampler_url: str) -> None:
    model = ScriptedModel(["Launch moved to Monday."], name="scripted:e2e")
    text = await _call(sampler_url, model, "summarize", {"text": "the launch memo"})
    assert text == "summary by scripted:e2e: Launch moved to Monday."
    (request,) = model.requests
    assert request.system == "You write one-line summaries."
    assert [(m.sender, m.text) for m in request.messages] == [
        ("user", "Summarise: the launch memo")
    ]
    assert request.max_tokens == 1000


async def test_end_to_end_sampling_with_tools(sampler_url: str) -> None:
    model = ScriptedModel([[ToolCall(id="t1", name="notes_search", input={"q": "launch"})]])
    text = await _call(sampler_url, model, "pick_tool", {})
    assert text == "toolUse: notes.search({'q': 'launch'})"
    assert [t.name for t in model.requests[0].tools] == ["notes_search"]
