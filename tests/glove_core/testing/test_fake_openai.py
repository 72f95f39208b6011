"""The fake Chat Completions endpoint, spoken to with plain httpx2."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from glove_core.testing import FakeError, FakeToolUse, serve_fake_openai


def _body(**extra: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], **extra}


async def test_json_completion_with_tool_calls() -> None:
    async with serve_fake_openai() as fake, httpx2.AsyncClient(base_url=fake.base_url) as http:
        fake.script(["Calling.", FakeToolUse("add", {"a": 1}, id="call_1")])
        data = (await http.post("/chat/completions", json=_body())).json()
    message = data["choices"][0]["message"]
    assert message["content"] == "Calling."
    assert message["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 1}'}
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    assert data["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}


async def test_stream_ends_with_usage_and_done() -> None:
    async with serve_fake_openai() as fake, httpx2.AsyncClient(base_url=fake.base_url) as http:
        fake.script("A streamed answer in pieces.")
        body = _body(stream=True, stream_options={"include_usage": True})
        async with http.stream("POST", "/chat/completions", json=body) as response:
            lines = [line async for line in response.aiter_lines() if line.startswith("data:")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[5:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "A streamed answer in pieces."
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


async def test_unanswered_tool_call_and_errors_are_refused() -> None:
    async with serve_fake_openai() as fake, httpx2.AsyncClient(base_url=fake.base_url) as http:
        bad = _body()
        bad["messages"].append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x"}}],
            }
        )
        bad["messages"].append({"role": "user", "content": "no tool message"})
        refused = await http.post("/chat/completions", json=bad)
        fake.script(FakeError(429, "slow down", retry_after=3))
        limited = await http.post("/chat/completions", json=_body())
    assert refused.status_code == 400 and "tool_call_id" in refused.json()["error"]["message"]
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"


async def test_repeated_long_prefix_is_reported_as_cached() -> None:
    system = {"role": "system", "content": "Stable instructions. " * 400}
    async with serve_fake_openai() as fake, httpx2.AsyncClient(base_url=fake.base_url) as http:
        first = await http.post(
            "/chat/completions", json=_body(messages=[system, {"role": "user", "content": "a"}])
        )
        second = await http.post(
            "/chat/completions", json=_body(messages=[system, {"role": "user", "content": "b"}])
        )
    assert first.json()["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second.json()["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 1024 and cached % 128 == 0
