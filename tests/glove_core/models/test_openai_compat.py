"""OpenAICompatModel against the fake Chat Completions endpoint over loopback HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_core import Glove, tool
from glove_core.errors import ContextWindowExceededError, MissingAPIKeyError, ModelRateLimitError
from glove_core.models import OpenAICompatModel, RetryPolicy
from glove_core.models.base import ModelRequest
from glove_core.models.openai_compat import to_chat_messages
from glove_core.testing import FakeDrop, FakeError, FakeOpenAIAPI, FakeToolUse, serve_fake_openai
from glove_core.types import ImagePart, Message, ToolCall, ToolResult, ToolResultData
from tests.glove_core.models.conftest import SEARCH, Recorder, RecordingSleep, simple_request


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAIAPI]:
    async with serve_fake_openai() as api:
        yield api


def _model(fake: FakeOpenAIAPI, **options: Any) -> OpenAICompatModel:
    return OpenAICompatModel("gpt-test", api_key="sk-oa-secret", base_url=fake.base_url, **options)


async def test_tool_loop_through_a_glove(fake_openai: FakeOpenAIAPI) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: the first number.
            b: the second number.
        """
        return a + b

    fake_openai.script(FakeToolUse("add", {"a": 2, "b": 40}), "The sum is 42.")
    async with _model(fake_openai) as model:
        glove = Glove(model=model, system_prompt="You add.").fold(add).build()
        result = await glove.process_request("What is 2 + 40?")
    assert result.text == "The sum is 42."
    second = fake_openai.requests[1].body
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "42"
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "add"
    assert second["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-oa-secret"


async def test_streaming_events_and_partial_arguments(fake_openai: FakeOpenAIAPI) -> None:
    arguments = {"q": "several words to split across many chunks", "limit": 5}
    fake_openai.script(["Searching now.", FakeToolUse("search", arguments)])
    recorder = Recorder()
    async with _model(fake_openai) as model:
        response = await model.prompt(simple_request(), recorder)
    assert "".join(d.text for d in recorder.of("text_delta")) == "Searching now."
    assert recorder.of("tool_use")[0].input == arguments
    assert recorder.names[-1] == "model_response_complete"
    assert response.stop_reason == "tool_calls" and response.usage.output_tokens > 0


async def test_json_mode_emits_model_response(fake_openai: FakeOpenAIAPI) -> None:
    fake_openai.script("Plain.")
    recorder = Recorder()
    async with _model(fake_openai, stream=False) as model:
        response = await model.prompt(simple_request(), recorder)
    assert recorder.names == ["model_response"] and response.message.text == "Plain."


async def test_cached_prompt_tokens_are_reported(fake_openai: FakeOpenAIAPI) -> None:
    long_system = "Stable instructions for the agent. " * 300
    async with _model(fake_openai) as model:
        first = await model.prompt(simple_request("one", long_system), Recorder())
        second = await model.prompt(simple_request("two", long_system), Recorder())
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens >= 1024
    prompt = fake_openai.requests[1].usage["prompt_tokens"]  # type: ignore[index]
    assert second.usage.input_tokens + second.usage.cache_read_tokens == prompt


async def test_rate_limit_retried_then_typed_error(fake_openai: FakeOpenAIAPI) -> None:
    fake_openai.script(FakeError(429, "slow down", retry_after=0.5), "ok")
    sleep = RecordingSleep()
    async with _model(fake_openai, retry=RetryPolicy(sleep=sleep)) as model:
        await model.prompt(simple_request(), Recorder())
        assert sleep.delays == [0.5]
        fake_openai.script(*[FakeError(429, "slow down") for _ in range(2)])
        model.retry = RetryPolicy(max_retries=1, sleep=sleep)
        with pytest.raises(ModelRateLimitError, match="slow down"):
            await model.prompt(simple_request(), Recorder())


async def test_context_length_exceeded_is_typed() -> None:
    async with serve_fake_openai(context_window=50) as fake, _model(fake) as model:
        with pytest.raises(ContextWindowExceededError, match="maximum context length"):
            await model.prompt(simple_request("word " * 500), Recorder())


async def test_dropped_stream_is_retried(fake_openai: FakeOpenAIAPI) -> None:
    fake_openai.script(FakeDrop(after_events=2), "Back.")
    async with _model(fake_openai, retry=RetryPolicy(sleep=RecordingSleep())) as model:
        response = await model.prompt(simple_request(), Recorder())
    assert response.message.text == "Back."


async def test_dropped_json_reply_is_retried(fake_openai: FakeOpenAIAPI) -> None:
    fake_openai.script(FakeDrop(), "Whole.")
    policy = RetryPolicy(sleep=RecordingSleep())
    async with _model(fake_openai, stream=False, retry=policy) as model:
        response = await model.prompt(simple_request(), Recorder())
    assert response.message.text == "Whole."
    assert [r.outcome for r in fake_openai.requests] == ["drop", "reply"]


async def test_key_rules(fake_openai: FakeOpenAIAPI) -> None:
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        OpenAICompatModel("gpt-test")
    async with OpenAICompatModel("llama", base_url=fake_openai.base_url) as local:
        await local.prompt(simple_request(), Recorder())
    assert "authorization" not in fake_openai.requests[0].headers
    assert "sk-oa-secret" not in repr(_model(fake_openai))


async def test_repairs_and_media_make_a_valid_request(fake_openai: FakeOpenAIAPI) -> None:
    calls = [ToolCall(id="a", name="search"), ToolCall(id="b", name="search")]
    image = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    messages = [
        Message(sender="user", text="go"),
        Message(sender="agent", tool_calls=calls),
        Message(
            sender="user",
            tool_results=[
                ToolResult(call_id="a", name="search", result=ToolResultData(content=[image])),
                ToolResult(call_id="a", name="search", result=ToolResultData(data="dup")),
            ],
        ),
    ]
    request = ModelRequest(system="s", tools=[SEARCH], messages=messages)
    converted = to_chat_messages(request)
    # The placeholder for the unanswered call comes before the media, so every tool message
    # follows its assistant message directly.
    assert [m["role"] for m in converted] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert converted[4]["tool_call_id"] == "b"
    assert converted[5]["content"][1]["type"] == "image_url"
    async with _model(fake_openai) as model:
        await model.prompt(request, Recorder())
    assert fake_openai.requests[0].outcome == "reply"


async def test_a_request_max_tokens_is_sent_and_the_smaller_limit_wins(
    fake_openai: FakeOpenAIAPI,
) -> None:
    capped = simple_request()
    capped.max_tokens = 64
    async with _model(fake_openai, stream=False) as model:
        await model.prompt(simple_request(), Recorder())
        await model.prompt(capped, Recorder())
    async with _model(fake_openai, max_tokens=32) as model:
        await model.prompt(capped, Recorder())
    bodies = [r.body for r in fake_openai.requests]
    assert "max_tokens" not in bodies[0]
    assert [b.get("max_tokens") for b in bodies[1:]] == [64, 32]
