"""Issue 18, point 1, on OpenAI-compatible APIs (no deferred tools there): a stable stand-in tool.

From the first call of a conversation whose tools may join, ``tools`` ends with
``glove_call_tool``; activated tools are never added to ``tools``: their definitions ride in the
find_capability result, and the model calls them through the stand-in. The fake Chat
Completions server caches prefixes the way OpenAI reports it (tools first).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_core import Glove, MemoryStore, OpenAICompatModel
from glove_core.testing import FakeOpenAIAPI, FakeToolUse, RecordedRequest, serve_fake_openai
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.testing import serve

SYSTEM = "You are the main agent of a small team. Answer briefly and use your tools. " * 70
PROXY = "glove_call_tool"


@pytest.fixture
async def catalogue() -> AsyncIterator[list[McpCatalogueEntry]]:
    async with serve("tracker") as tracker_url:
        yield [
            McpCatalogueEntry(
                id="tracker",
                name="Tracker",
                url=tracker_url,
                description="List, create, update and delete issues in a bug tracker.",
            )
        ]


def main_requests(fake: FakeOpenAIAPI) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.body["messages"][0]["content"] == SYSTEM]


def tool_names(record: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in record.body["tools"]]


async def run(catalogue: list[McpCatalogueEntry], *script: Any) -> tuple[FakeOpenAIAPI, Any]:
    async with serve_fake_openai() as fake:
        fake.script(
            FakeToolUse(FIND_CAPABILITY, {"need": "list the open issues"}, id="m1"),
            FakeToolUse("activate", {"id": "tracker"}, id="s1"),
            "Activated tracker.",
            *script,
        )
        model = OpenAICompatModel("gpt-test", api_key="test", base_url=fake.base_url)
        async with model:
            glove = Glove(model=model, system_prompt=SYSTEM, store=MemoryStore(), server_mode=True)
            async with await mount_mcp(glove, MemoryMcpAdapter("c"), entries=catalogue):
                glove.build()
                result = await glove.process_request("what is open in the tracker?")
    return fake, result


async def test_activated_tools_are_called_through_the_stand_in_and_the_prefix_is_kept(
    catalogue: list[McpCatalogueEntry],
) -> None:
    call = {"name": "tracker__list_issues", "arguments": {}}
    fake, result = await run(catalogue, FakeToolUse(PROXY, call, id="m2"), "There are issues.")
    assert result.text == "There are issues."
    first, after, last = main_requests(fake)
    # The same tools array on every call: the stand-in from the first call, no tracker tool.
    assert tool_names(first)[-1] == PROXY
    assert FIND_CAPABILITY in tool_names(first)
    assert not any(n.startswith("tracker__") for n in tool_names(first))
    assert first.body["tools"] == after.body["tools"] == last.body["tools"]
    # The find_capability result carries the activated tools' definitions.
    found = next(m for m in after.body["messages"] if m.get("tool_call_id") == "m1")
    assert "Tools added (call each through glove_call_tool" in found["content"]
    assert "- tracker__list_issues:" in found["content"]
    # The whole earlier prompt is read back from the provider's prefix cache.
    assert after.usage is not None and last.usage is not None
    assert after.usage["prompt_tokens_details"]["cached_tokens"] >= 1024
    assert (
        last.usage["prompt_tokens_details"]["cached_tokens"]
        > after.usage["prompt_tokens_details"]["cached_tokens"]
    )
    # Saved as a call of the tool itself; sent back as the stand-in call the model made.
    [called] = [c for m in result.messages for c in m.tool_calls or [] if c.id == "m2"]
    assert (called.name, called.input) == ("tracker__list_issues", {})
    [resent] = [
        c for m in last.body["messages"] for c in m.get("tool_calls") or [] if c["id"] == "m2"
    ]
    assert resent["function"]["name"] == PROXY
    assert json.loads(resent["function"]["arguments"]) == call
    [listed] = [r for m in result.messages for r in m.tool_results or [] if r.call_id == "m2"]
    assert listed.result.status == "success"


async def test_a_stand_in_call_without_a_tool_name_gets_an_error_the_model_can_act_on(
    catalogue: list[McpCatalogueEntry],
) -> None:
    _, result = await run(
        catalogue, FakeToolUse(PROXY, {"arguments": {}}, id="m2"), "I could not call it."
    )
    assert result.text == "I could not call it."
    [answer] = [r for m in result.messages for r in m.tool_results or [] if r.call_id == "m2"]
    assert answer.result.status == "error"
    assert PROXY in (answer.result.message or "")
