"""AnthropicModel through the real anthropic SDK against the fake API: streaming, errors,
retries, abort."""

from __future__ import annotations

import asyncio
import logging

import pytest

from glove_core.abort import AbortController, AbortError
from glove_core.errors import (
    ContextWindowExceededError,
    MissingAPIKeyError,
    ModelAuthenticationError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelOverloadedError,
    ModelRateLimitError,
)
from glove_core.models import AnthropicModel, RetryPolicy
from glove_core.models.base import ModelRequest
from glove_core.subscribers import ModelResponseEvent, ToolUse
from glove_core.testing import (
    FakeAnthropicAPI,
    FakeDrop,
    FakeError,
    FakeStall,
    FakeToolUse,
    serve_fake_anthropic,
)
from tests.glove_core.models.conftest import Recorder, RecordingSleep, simple_request


def _model(
    fake: FakeAnthropicAPI, *, stream: bool = True, retry: RetryPolicy | None = None
) -> AnthropicModel:
    return AnthropicModel(
        "claude-test", api_key="sk-test-secret", base_url=fake.base_url, stream=stream, retry=retry
    )


async def test_missing_api_key_names_the_fix() -> None:
    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-test")


async def test_key_from_environment_is_used_and_never_shown(
    fake: FakeAnthropicAPI, monkeypatch: pytest.MonkeyPatch, recorder: Recorder
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env-secret")
    async with AnthropicModel("claude-test", base_url=fake.base_url) as model:
        await model.prompt(simple_request(), recorder)
        assert "sk-env-secret" not in repr(model)
    headers = fake.requests[0].headers
    assert "sk-env-secret" in headers.get("x-api-key", "") + headers.get("authorization", "")


async def test_stream_reports_deltas_tool_use_then_completion(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    arguments = {"q": "quarterly numbers for the north region", "filters": {"year": [2025, 2026]}}
    fake.script(["I will search the notes for that.", FakeToolUse("search", arguments)])
    async with _model(fake) as model:
        response = await model.prompt(simple_request(), recorder)
    deltas = recorder.of("text_delta")
    assert len(deltas) > 1
    assert "".join(d.text for d in deltas) == "I will search the notes for that."
    [tool_use] = recorder.of("tool_use")
    assert isinstance(tool_use, ToolUse) and tool_use.input == arguments
    assert recorder.names[-1] == "model_response_complete"
    assert recorder.names.index("tool_use") > recorder.names.index("text_delta")
    assert response.message.tool_calls is not None
    assert response.message.tool_calls[0].input == arguments
    assert response.stop_reason == "tool_use"
    complete = recorder.of("model_response_complete")[0]
    assert complete.usage == response.usage and response.usage.output_tokens > 0


async def test_without_streaming_one_model_response_event(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    fake.script("Plain answer.")
    async with _model(fake, stream=False) as model:
        response = await model.prompt(simple_request(), recorder)
    assert recorder.names == ["model_response"]
    event = recorder.of("model_response")[0]
    assert isinstance(event, ModelResponseEvent) and event.text == "Plain answer."
    assert response.message.text == "Plain answer."
    assert fake.requests[0].stream is False


async def test_abort_mid_stream_closes_the_http_stream(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    stall = FakeStall("Working on it")
    fake.script(stall)
    controller = AbortController()
    async with _model(fake) as model:
        task = asyncio.create_task(model.prompt(simple_request(), recorder, controller.signal))
        await stall.started.wait()
        await asyncio.wait_for(recorder.wait_for("text_delta"), timeout=10)
        controller.abort("user pressed stop")
        with pytest.raises(AbortError, match="user pressed stop"):
            await task
        await asyncio.wait_for(stall.disconnected.wait(), timeout=10)
    assert "model_response_complete" not in recorder.names


async def test_529_is_retried_honouring_retry_after(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    fake.script(FakeError(529, retry_after=0.25), FakeError(529, retry_after=1.5), "Recovered.")
    sleep = RecordingSleep()
    async with _model(fake, retry=RetryPolicy(sleep=sleep)) as model:
        response = await model.prompt(simple_request(), recorder)
    assert response.message.text == "Recovered."
    assert sleep.delays == [0.25, 1.5]
    assert [r.outcome for r in fake.requests] == ["error", "error", "reply"]


async def test_5xx_without_retry_after_backs_off_exponentially(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    fake.script(FakeError(500), FakeError(500), FakeError(500), "ok")
    sleep = RecordingSleep()
    async with _model(fake, retry=RetryPolicy(base_delay=1.0, sleep=sleep)) as model:
        await model.prompt(simple_request(), recorder)
    assert len(sleep.delays) == 3
    for attempt, delay in enumerate(sleep.delays):
        assert 0.5 * 2**attempt <= delay <= 2**attempt


async def test_429_still_failing_after_retries_raises_rate_limit_error(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    fake.script(*[FakeError(429, "slow down", retry_after=2) for _ in range(3)])
    async with _model(fake, retry=RetryPolicy(max_retries=2, sleep=RecordingSleep())) as model:
        with pytest.raises(ModelRateLimitError, match="after 3 attempts: slow down") as caught:
            await model.prompt(simple_request(), recorder)
    assert caught.value.retry_after == 2 and caught.value.attempts == 3
    assert len(fake.requests) == 3
    assert "sk-test-secret" not in str(caught.value)


async def test_overloaded_asking_for_too_long_a_wait_fails_at_once(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    fake.script(FakeError(529, retry_after=600))
    async with _model(fake, retry=RetryPolicy(sleep=RecordingSleep())) as model:
        with pytest.raises(ModelOverloadedError) as caught:
            await model.prompt(simple_request(), recorder)
    assert caught.value.retry_after == 600 and len(fake.requests) == 1


async def test_400_surfaces_the_api_message_without_retrying(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    fake.script(FakeError(400, "messages.0.content: something is off"))
    async with _model(fake, retry=RetryPolicy(sleep=RecordingSleep())) as model:
        with pytest.raises(ModelBadRequestError, match="something is off") as caught:
            await model.prompt(simple_request(), recorder)
    assert not isinstance(caught.value, ContextWindowExceededError)
    assert len(fake.requests) == 1


async def test_401_raises_authentication_error(fake: FakeAnthropicAPI, recorder: Recorder) -> None:
    fake.script(FakeError(401, "invalid x-api-key"))
    async with _model(fake) as model:
        with pytest.raises(ModelAuthenticationError, match="invalid x-api-key"):
            await model.prompt(simple_request(), recorder)


async def test_prompt_over_the_context_window_raises_context_window_exceeded(
    recorder: Recorder,
) -> None:
    async with serve_fake_anthropic(context_window=200) as fake, _model(fake) as model:
        with pytest.raises(ContextWindowExceededError, match="prompt is too long"):
            await model.prompt(simple_request("word " * 2000), recorder)
    assert len(fake.requests) == 1


async def test_dropped_connection_is_retried(fake: FakeAnthropicAPI, recorder: Recorder) -> None:
    fake.script(FakeDrop(after_events=5), "Second try worked.")
    sleep = RecordingSleep()
    async with _model(fake, retry=RetryPolicy(sleep=sleep)) as model:
        response = await model.prompt(simple_request(), recorder)
    assert response.message.text == "Second try worked."
    assert len(sleep.delays) == 1


async def test_dropped_json_reply_is_retried(fake: FakeAnthropicAPI, recorder: Recorder) -> None:
    fake.script(FakeDrop(), "Whole this time.")
    sleep = RecordingSleep()
    async with _model(fake, stream=False, retry=RetryPolicy(sleep=sleep)) as model:
        response = await model.prompt(simple_request(), recorder)
    assert response.message.text == "Whole this time."
    assert [r.outcome for r in fake.requests] == ["drop", "reply"] and len(sleep.delays) == 1


async def test_connection_dropping_every_time_raises_connection_error(
    fake: FakeAnthropicAPI, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    fake.script(FakeDrop(), FakeDrop(), FakeDrop(after_events=0))
    policy = RetryPolicy(max_retries=2, sleep=RecordingSleep())
    with caplog.at_level(logging.DEBUG):
        async with _model(fake, retry=policy) as model:
            with pytest.raises(ModelConnectionError, match="all 3 attempt"):
                await model.prompt(simple_request(), recorder)
    assert "sk-test-secret" not in caplog.text


async def test_a_passed_client_is_used_and_left_open(
    fake: FakeAnthropicAPI, recorder: Recorder
) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url)
    async with AnthropicModel("claude-test", client=client) as model:
        await model.prompt(simple_request(), recorder)
    assert not client.is_closed()
    await client.messages.create(
        model="claude-test", max_tokens=5, messages=[{"role": "user", "content": "still open"}]
    )
    await client.close()


@pytest.mark.parametrize("stream", [True, False])
async def test_a_request_max_tokens_lowers_the_adapters_limit(
    fake: FakeAnthropicAPI, recorder: Recorder, stream: bool
) -> None:
    capped = simple_request()
    capped.max_tokens = 64
    async with _model(fake, stream=stream) as model:
        await model.prompt(simple_request(), recorder)
        await model.prompt(capped, recorder)
        model.max_tokens = 32
        await model.prompt(capped, recorder)
    assert [r.body["max_tokens"] for r in fake.requests] == [8192, 64, 32]


def test_a_request_max_tokens_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        ModelRequest(system="", tools=[], messages=[], max_tokens=0)
