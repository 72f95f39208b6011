"""The fake Messages API, driven by the real anthropic SDK over loopback HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2
import pytest

from glove_core.testing import (
    FakeAnthropicAPI,
    FakeDrop,
    FakeError,
    FakeToolUse,
    serve_fake_anthropic,
)

LONG = "The quick brown fox jumps over the lazy dog. " * 120  # ~1,350 tokens


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropicAPI]:
    async with serve_fake_anthropic() as api:
        yield api


@pytest.fixture
async def client(fake: FakeAnthropicAPI) -> AsyncIterator[anthropic.AsyncAnthropic]:
    sdk = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.base_url, max_retries=0)
    yield sdk
    await sdk.close()


def _user(text: str) -> Any:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


async def test_json_reply_with_text_and_tool_use(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    fake.script(["Let me look.", FakeToolUse("search", {"q": "cats"}, id="toolu_1")])
    message = await client.messages.create(
        model="claude-test", max_tokens=100, messages=[_user("find cats")]
    )
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].model_dump()["input"] == {"q": "cats"}
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens > 0
    headers = fake.requests[0].headers
    assert "test-key" in (headers.get("x-api-key", ""), headers.get("authorization", "")[7:])


async def test_a_request_without_credentials_gets_401(fake: FakeAnthropicAPI) -> None:
    async with httpx2.AsyncClient(base_url=fake.base_url) as http:
        response = await http.post(
            "/v1/messages", json={"model": "m", "max_tokens": 5, "messages": [_user("x")]}
        )
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


async def test_stream_assembles_text_and_partial_json(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    arguments = {"query": "a long query with several words", "limit": 10, "tags": ["x", "y"]}
    fake.script(["Streaming some text in pieces.", FakeToolUse("search", arguments)])
    texts: list[str] = []
    json_pieces: list[str] = []
    async with client.messages.stream(
        model="claude-test", max_tokens=100, messages=[_user("go")]
    ) as stream:
        async for event in stream:
            if event.type == "text":
                texts.append(event.text)
            elif event.type == "input_json":
                json_pieces.append(event.partial_json)
        final = await stream.get_final_message()
    assert "".join(texts) == "Streaming some text in pieces."
    assert len(texts) > 1 and len(json_pieces) > 1
    assert final.content[1].model_dump()["input"] == arguments
    assert final.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, anthropic.BadRequestError),
        (429, anthropic.RateLimitError),
        (500, anthropic.InternalServerError),
        (529, anthropic.OverloadedError),
    ],
)
async def test_injected_errors_reach_the_sdk_as_its_classes(
    fake: FakeAnthropicAPI,
    client: anthropic.AsyncAnthropic,
    status: int,
    error_class: type[anthropic.APIStatusError],
) -> None:
    fake.script(FakeError(status, "injected failure", retry_after=1.5))
    with pytest.raises(error_class) as caught:
        await client.messages.create(model="claude-test", max_tokens=10, messages=[_user("x")])
    assert caught.value.status_code == status
    assert caught.value.response.headers["retry-after"] == "1.5"
    assert caught.value.api_message == "injected failure"
    assert fake.requests[0].outcome == "error"


async def test_dropped_connection_mid_stream_fails_the_sdk_stream(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    fake.script(FakeDrop(after_events=4))
    with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)):
        async with client.messages.stream(
            model="claude-test", max_tokens=10, messages=[_user("x")]
        ) as stream:
            await stream.get_final_message()
    assert fake.requests[0].outcome == "drop"


async def test_dropped_connection_in_a_json_reply(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    fake.script(FakeDrop())
    with pytest.raises(anthropic.APIConnectionError):
        await client.messages.create(model="claude-test", max_tokens=10, messages=[_user("x")])


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (
            [
                _user("hi"),
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}],
                },
                _user("no result given"),
            ],
            "without `tool_result` blocks immediately after: t1",
        ),
        ([_user("   ")], "non-whitespace text"),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9"}]}],
            "unexpected `tool_use_id`",
        ),
    ],
)
async def test_malformed_requests_are_refused_like_the_real_api(
    fake: FakeAnthropicAPI,
    client: anthropic.AsyncAnthropic,
    messages: list[Any],
    expected: str,
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=expected):
        await client.messages.create(model="claude-test", max_tokens=10, messages=messages)
    assert fake.pending == 0 and fake.requests[0].outcome == "invalid"


async def test_more_than_four_breakpoints_are_refused(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    cc: Any = {"type": "ephemeral"}
    content: Any = [{"type": "text", "text": f"part {i}", "cache_control": cc} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks"):
        await client.messages.create(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": content}]
        )


async def test_prompt_over_the_context_window_is_refused() -> None:
    async with serve_fake_anthropic(context_window=100) as fake:
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
            await sdk.messages.create(model="claude-test", max_tokens=10, messages=[_user(LONG)])
        await sdk.close()


async def test_cache_write_then_read_and_usage_totals(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    system: Any = [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]
    first = await client.messages.create(
        model="claude-test", max_tokens=10, system=system, messages=[_user("one")]
    )
    second = await client.messages.create(
        model="claude-test", max_tokens=10, system=system, messages=[_user("two")]
    )
    assert first.usage.cache_read_input_tokens == 0
    written = first.usage.cache_creation_input_tokens
    assert written is not None and written > 1024
    assert second.usage.cache_read_input_tokens == written
    assert second.usage.cache_creation_input_tokens == 0
    assert fake.requests[1].cache_control_paths() == ["system.0"]


async def test_a_changed_prefix_misses(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    for text in (LONG, LONG + " changed"):
        system: Any = [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]
        reply = await client.messages.create(
            model="claude-test", max_tokens=10, system=system, messages=[_user("q")]
        )
    assert reply.usage.cache_read_input_tokens == 0
    assert (reply.usage.cache_creation_input_tokens or 0) > 1024


def _conversation(turns: int, breakpoint_at: int) -> list[Any]:
    messages: list[Any] = [_user(LONG)]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]})
        messages.append(_user(f"u{i}"))
    block = messages[breakpoint_at]["content"][-1]
    block["cache_control"] = {"type": "ephemeral"}
    return messages


@pytest.mark.parametrize(("added_blocks", "hit"), [(19, True), (21, False)])
async def test_lookback_finds_an_earlier_breakpoint_within_20_blocks(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic, added_blocks: int, hit: bool
) -> None:
    first = _conversation(0, 0)
    await client.messages.create(model="claude-test", max_tokens=10, messages=first)
    # One block per message: the new breakpoint sits `added_blocks` blocks after the old one.
    later = _conversation(added_blocks, added_blocks)[: added_blocks + 1]
    reply = await client.messages.create(model="claude-test", max_tokens=10, messages=later)
    read = reply.usage.cache_read_input_tokens or 0
    assert (read > 1024) is hit


async def test_entries_expire_after_their_ttl(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    for ttl, idle, expect_hit in (("5m", 299, True), ("5m", 301, False), ("1h", 3000, True)):
        fake.clear_cache()
        system: Any = [
            {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral", "ttl": ttl}}
        ]
        await client.messages.create(
            model="claude-test", max_tokens=10, system=system, messages=[_user("a")]
        )
        fake.advance_clock(idle)
        reply = await client.messages.create(
            model="claude-test", max_tokens=10, system=system, messages=[_user("a")]
        )
        assert ((reply.usage.cache_read_input_tokens or 0) > 0) is expect_hit, (ttl, idle)


async def test_short_prefixes_are_not_cached(
    fake: FakeAnthropicAPI, client: anthropic.AsyncAnthropic
) -> None:
    system: Any = [{"type": "text", "text": "short", "cache_control": {"type": "ephemeral"}}]
    for _ in range(2):
        reply = await client.messages.create(
            model="claude-test", max_tokens=10, system=system, messages=[_user("a")]
        )
    assert reply.usage.cache_read_input_tokens == 0
    assert reply.usage.cache_creation_input_tokens == 0


async def test_responder_answers_when_the_script_is_empty() -> None:
    def echo(body: dict[str, Any]) -> str:
        return f"you sent {len(body['messages'])} message(s)"

    async with serve_fake_anthropic(responder=echo) as fake:
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
        reply = await sdk.messages.create(model="m", max_tokens=5, messages=[_user("x")])
        await sdk.close()
    assert reply.content[0].model_dump()["text"] == "you sent 1 message(s)"


async def test_a_bug_in_the_fake_fails_the_test_with_its_own_error() -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("responder bug")

    with pytest.raises(RuntimeError, match="responder bug"):
        async with serve_fake_anthropic(responder=broken) as fake:
            sdk = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
            with pytest.raises(anthropic.InternalServerError):
                await sdk.messages.create(model="m", max_tokens=5, messages=[_user("x")])
            await sdk.close()
