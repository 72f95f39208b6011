"""glove_core.tracing: the spans and metrics of a turn, read from the SDK's in-memory exporter
and reader, with real parts (ScriptedModel, AnthropicModel against the fake Messages API)."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is in the test extra")

from opentelemetry.trace import SpanKind, StatusCode

from glove_core import AnthropicModel, Glove, RetryPolicy, ScriptedModel, ToolCall, tool
from glove_core.compaction import CompactionConfig
from glove_core.errors import ScriptExhaustedError
from glove_core.testing import FakeError, serve_fake_anthropic
from glove_core.tracing import CAPTURE_CONTENT_ENV, Attr, split_model_name
from tests._otel import all_attribute_values, attrs, sid, telemetry


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


@tool
async def broken(text: str) -> str:
    """Always fails.

    Args:
        text: anything.
    """
    raise RuntimeError("the tool broke")


def _glove(script: list[object], **kwargs: object) -> Glove:
    glove = Glove(ScriptedModel(script), "You add numbers.", max_retries=0, **kwargs)  # type: ignore[arg-type]
    return glove.fold(add).fold(broken).build()


async def test_a_request_is_an_invoke_agent_span_over_its_model_calls_and_tool_calls() -> None:
    calls = [
        ToolCall(id="c-add", name="add", input={"a": 2, "b": 3}),
        ToolCall(id="c-broken", name="broken", input={"text": "x"}),
        ToolCall(id="c-missing", name="nope", input={}),
    ]
    glove = _glove([calls, "5"])
    with telemetry().collect() as t:
        result = await glove.process_request("what is 2 + 3?")
    assert result.text == "5"

    agent = t.one("invoke_agent")
    assert agent.parent is None
    assert agent.kind is SpanKind.INTERNAL
    attributes = attrs(agent)
    assert attributes[Attr.OPERATION] == "invoke_agent"
    assert attributes[Attr.CONVERSATION] == glove.store.identifier
    assert attributes[Attr.TURN_KIND] == "request"
    assert attributes[Attr.MODEL_CALLS] == 2
    assert attributes[Attr.INPUT_TOKENS] == result.usage.input_tokens
    assert attributes[Attr.OUTPUT_TOKENS] == result.usage.output_tokens

    chats = t.named("chat scripted")
    assert len(chats) == 2
    tools = [s for s in t.spans() if s.name.startswith("execute_tool ")]
    assert [s.name for s in tools] == [
        "execute_tool add",
        "execute_tool broken",
        "execute_tool nope",
    ]
    # The conventions' shape: model calls and tool calls are siblings under the agent span.
    assert {sid(s) for s in t.children(agent)} == {sid(s) for s in (*chats, *tools)}
    first = attrs(chats[0])
    assert chats[0].kind is SpanKind.CLIENT
    assert first[Attr.OPERATION] == "chat"
    assert first[Attr.PROVIDER] == "glove"
    assert first[Attr.REQUEST_MODEL] == "scripted"
    assert first[Attr.FINISH_REASONS] == ("tool_use",)
    assert first[Attr.INPUT_TOKENS] > 0

    by_id = {attrs(s)[Attr.TOOL_CALL_ID]: s for s in tools}
    ok = by_id["c-add"]
    assert attrs(ok)[Attr.TOOL_STATUS] == "success"
    assert ok.status.status_code is StatusCode.UNSET
    failed = attrs(by_id["c-broken"])
    assert (failed[Attr.TOOL_STATUS], failed[Attr.ERROR_TYPE]) == ("error", "error")
    assert by_id["c-broken"].status.status_code is StatusCode.ERROR
    unknown = attrs(by_id["c-missing"])
    assert unknown[Attr.ERROR_TYPE] == "unknown_tool"
    # Nothing the model or the user wrote, by default.
    values = all_attribute_values(t.spans())
    assert not any("what is 2 + 3" in v or "the tool broke" in v for v in values)
    assert Attr.TOOL_ARGUMENTS not in attrs(ok)


async def test_switched_off_and_aborted_tool_calls_say_so() -> None:
    glove = _glove(
        [[ToolCall(id="c1", name="add", input={"a": 1, "b": 1})], "done"],
    )
    glove.switch_tools(disable=["add"])
    with telemetry().collect() as t:
        await glove.process_request("add")
    span = t.one("execute_tool add")
    assert attrs(span)[Attr.TOOL_STATUS] == "switched_off"
    assert attrs(span)[Attr.ERROR_TYPE] == "switched_off"


async def test_content_is_recorded_only_when_the_application_opts_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "span_only")
    glove = _glove([[ToolCall(id="c1", name="add", input={"a": 20, "b": 22})], "it is 42"])
    with telemetry().collect() as t:
        await glove.process_request("what is 20 + 22?")
    agent = dict(t.one("invoke_agent").attributes or {})
    assert "what is 20 + 22?" in str(agent[Attr.INPUT_MESSAGES])
    assert "it is 42" in str(agent[Attr.OUTPUT_MESSAGES])
    used = dict(t.one("execute_tool add").attributes or {})
    assert used[Attr.TOOL_ARGUMENTS] == '{"a": 20, "b": 22}'
    assert used[Attr.TOOL_RESULT] == "42"


async def test_a_failed_model_call_marks_its_span_and_the_turn() -> None:
    glove = _glove([])  # the script is empty: the first model call fails
    with telemetry().collect() as t, pytest.raises(ScriptExhaustedError):
        await glove.process_request("hello")
    chat = t.one("chat scripted")
    kind = "glove_core.errors.ScriptExhaustedError"
    assert attrs(chat)[Attr.ERROR_TYPE] == kind
    assert chat.status.status_code is StatusCode.ERROR
    agent = t.one("invoke_agent")
    assert attrs(agent)[Attr.ERROR_TYPE] == kind
    # The status says the kind only: exception messages may quote anything.
    assert agent.status.description == kind
    assert not agent.events


async def test_anthropic_calls_carry_provider_cache_tokens_retries_and_metrics() -> None:
    sleeps: list[float] = []

    async def no_wait(seconds: float) -> None:
        sleeps.append(seconds)

    async with serve_fake_anthropic() as fake:
        fake.script(FakeError(529, retry_after=0.01), "first", "second")
        model = AnthropicModel(
            "claude-test",
            api_key="sk-ant-secret-key-123",
            base_url=fake.base_url,
            retry=RetryPolicy(sleep=no_wait),
        )
        # A system prompt long enough to be cached: the second request reads it.
        glove = Glove(model, "You are terse. " + "Remember the rules. " * 400).build()
        with telemetry().collect() as t:
            await glove.process_request("one")
            await glove.process_request("two")
        await model.aclose()
    assert sleeps == [0.01]
    chats = t.named("chat claude-test")
    assert len(chats) == 2
    first, second = (attrs(c) for c in chats)
    assert first[Attr.PROVIDER] == "anthropic"
    assert first[Attr.REQUEST_MODEL] == "claude-test"
    assert first[Attr.CACHE_WRITE_TOKENS] > 0
    assert second[Attr.CACHE_READ_TOKENS] > 0
    # Input counts every input token, the cached ones included, as the conventions ask.
    assert second[Attr.INPUT_TOKENS] >= second[Attr.CACHE_READ_TOKENS]
    retries = [e for e in chats[0].events if e.name == "gen_ai.retry"]
    assert len(retries) == 1
    assert dict(retries[0].attributes or {})["glove.retry.attempt"] == 1
    assert not chats[1].events

    points = t.points("gen_ai.client.token.usage")
    types = {a[Attr.TOKEN_TYPE] for a, _ in points if a.get(Attr.REQUEST_MODEL) == "claude-test"}
    assert {"input", "output", "cache_read", "cache_write"} <= types
    durations = [
        p for a, p in t.points("gen_ai.client.operation.duration")
        if a.get(Attr.PROVIDER) == "anthropic" and Attr.ERROR_TYPE not in a
    ]  # fmt: skip
    assert durations and sum(p.count for p in durations) >= 2
    assert not any("sk-ant-secret-key-123" in v for v in all_attribute_values(t.spans()))


async def test_compaction_is_a_span_of_its_own() -> None:
    long = "word " * 400
    script: list[object] = [long] * 12
    glove = Glove(
        ScriptedModel(script),  # type: ignore[arg-type]
        "sys",
        compaction=CompactionConfig(context_limit=1000, threshold=0.5),
    ).build()
    with telemetry().collect() as t:
        await glove.process_request("first " * 100)
        await glove.process_request("second " * 100)
        await glove.process_request("third")
    compactions = t.named("compaction")
    assert compactions, t.names()
    parent = compactions[0].parent
    agents = {sid(s) for s in t.named("invoke_agent")}
    assert parent is not None and parent.span_id in agents


def test_model_names_split_into_provider_and_model() -> None:
    assert split_model_name("anthropic:claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert split_model_name("openai:gpt-4o") == ("openai", "gpt-4o")
    assert split_model_name("scripted") == ("glove", "scripted")
