"""Issue 18, point 1: activating a server mid-conversation keeps the prompt cache.

Real parts throughout: local MCP servers over HTTP, the real ``anthropic`` SDK inside
``AnthropicModel`` against the fake Messages API (which keeps deferred tools out of the cached
prefix and loads them where a ``tool_reference`` names them), real SQLite files.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from glove_core import (
    AnthropicModel,
    CacheCollapse,
    CompactionConfig,
    Glove,
    MemoryStore,
    Message,
    ModelRequest,
    SqliteStore,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultData,
)
from glove_core.compaction import compact
from glove_core.subscribers import Notify
from glove_core.testing import (
    FakeAnthropicAPI,
    FakeToolUse,
    RecordedRequest,
    RecordingSubscriber,
    serve_fake_anthropic,
)
from glove_core.tools import ToolSpec
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, SqliteMcpAdapter, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.subscribers import McpListChanged
from glove_mcp.testing import serve
from tests.glove_mcp.connect.probe_server import build_probe_server

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

# Long enough to be cached (the fake, like the API, caches prefixes from 1,024 tokens).
SYSTEM = "You are the main agent of a small team. Answer briefly and use your tools. " * 150
TRACKER_TOOLS = {
    "tracker__list_issues",
    "tracker__create_issue",
    "tracker__update_issue",
    "tracker__delete_issue",
}
"""The tracker declares resources but lists none, so it gets no ``tracker__read_resource``."""


@pytest.fixture
async def catalogue() -> AsyncIterator[list[McpCatalogueEntry]]:
    async with serve("notes") as notes_url, serve("tracker") as tracker_url:
        yield [
            McpCatalogueEntry(
                id="notes", name="Notes", url=notes_url, description="Pages of notes."
            ),
            McpCatalogueEntry(
                id="tracker",
                name="Tracker",
                url=tracker_url,
                description="List, create, update and delete issues in a bug tracker.",
            ),
        ]


def main_requests(fake: FakeAnthropicAPI) -> list[RecordedRequest]:
    return [r for r in fake.requests if SYSTEM in json.dumps(r.body.get("system"))]


def ordinary_tools(record: RecordedRequest) -> str:
    """The cached part of the tools array, as sent (cache_control included)."""
    return json.dumps([t for t in record.body["tools"] if not t.get("defer_loading")])


def read_by(record: RecordedRequest) -> int:
    """What a call read from the cache (the SDK's ``cache_read_input_tokens``)."""
    return int((record.usage or {})["cache_read_input_tokens"])


def established_by(record: RecordedRequest) -> int:
    """The prefix a call left in the cache: what it read plus what it wrote."""
    usage = record.usage or {}
    return read_by(record) + int(usage["cache_creation_input_tokens"])


def deferred_names(record: RecordedRequest) -> set[str]:
    return {t["name"] for t in record.body["tools"] if t.get("defer_loading")}


def references(record: RecordedRequest) -> list[str]:
    return [
        part["tool_name"]
        for message in record.body["messages"]
        for block in message["content"]
        if block["type"] == "tool_result"
        for part in block["content"]
        if part["type"] == "tool_reference"
    ]


def activation_script() -> list[Any]:
    """Main agent asks find_capability; the subagent activates the tracker; the main agent
    calls a tracker tool (the fake refuses a script that calls a tool the model cannot see)."""
    return [
        FakeToolUse(FIND_CAPABILITY, {"need": "list the open issues"}, id="m1"),
        FakeToolUse("activate", {"id": "tracker"}, id="s1"),
        "Activated tracker.",
        FakeToolUse("tracker__list_issues", {}, id="m2"),
        "There are open issues.",
    ]


def model_for(fake: FakeAnthropicAPI) -> AnthropicModel:
    return AnthropicModel("claude-test", api_key="test", base_url=fake.base_url)


async def test_activated_tools_are_deferred_callable_and_the_cache_is_read(
    catalogue: list[McpCatalogueEntry],
) -> None:
    recorder = RecordingSubscriber()
    async with serve_fake_anthropic() as fake:
        fake.script(*activation_script())
        async with model_for(fake) as model:
            glove = Glove(model=model, system_prompt=SYSTEM, store=MemoryStore(), server_mode=True)
            glove.add_subscriber(recorder)
            async with await mount_mcp(glove, MemoryMcpAdapter("c"), entries=catalogue):
                glove.build()
                result = await glove.process_request("what is open in the tracker?")
    assert result.text == "There are open issues."
    first, after, last = main_requests(fake)
    # Before: no tracker tool. After: all of them, deferred, loaded by the find_capability
    # result; the cached part of the tools array is byte-identical.
    assert deferred_names(first) == set()
    assert deferred_names(after) == TRACKER_TOOLS
    assert ordinary_tools(after) == ordinary_tools(first)
    assert set(references(after)) == TRACKER_TOOLS
    # The whole prefix of the first call is read back (the fake's usage, and the SDK's below).
    established = established_by(first)
    assert established > 1024
    assert read_by(after) >= established
    assert read_by(last) > read_by(after)
    assert result.usage.cache_read_tokens > 0
    assert recorder.of(CacheCollapse) == []
    # The references are in the saved history, on the find_capability result.
    found = next(
        r for m in result.messages for r in m.tool_results or [] if r.name == FIND_CAPABILITY
    )
    assert set(found.result.tool_references or []) == TRACKER_TOOLS
    listed = next(r for m in result.messages for r in m.tool_results or [] if r.call_id == "m2")
    assert listed.result.status == "success"


async def test_after_a_restart_the_deferred_tools_are_offered_callable_and_cached(
    catalogue: list[McpCatalogueEntry], tmp_path: Path
) -> None:
    conversation, mcp_state = tmp_path / "conversation.db", tmp_path / "mcp.db"
    async with serve_fake_anthropic() as fake:
        fake.script(*activation_script())
        async with model_for(fake) as model:
            store = SqliteStore(conversation, "s1")
            glove = Glove(model=model, system_prompt=SYSTEM, store=store, server_mode=True)
            adapter = SqliteMcpAdapter(mcp_state, "s1")
            async with await mount_mcp(glove, adapter, entries=catalogue):
                glove.build()
                await glove.process_request("what is open in the tracker?")
            await store.aclose()
        before = main_requests(fake)[-1]

        # A new process: a new Glove on the same files; the mount reloads the tracker.
        fake.script(FakeToolUse("tracker__list_issues", {}, id="m3"), "Still open.")
        recorder = RecordingSubscriber()
        async with model_for(fake) as model:
            store = SqliteStore(conversation, "s1")
            glove = Glove(model=model, system_prompt=SYSTEM, store=store, server_mode=True)
            glove.add_subscriber(recorder)
            adapter = SqliteMcpAdapter(mcp_state, "s1")
            async with await mount_mcp(glove, adapter, entries=catalogue) as mount:
                assert mount.loaded == ["tracker"]
                glove.build()
                result = await glove.process_request("and now?")
            await store.aclose()
    assert result.text == "Still open."
    first_after_restart = main_requests(fake)[-2]
    assert deferred_names(first_after_restart) == TRACKER_TOOLS
    assert ordinary_tools(first_after_restart) == ordinary_tools(before)
    assert set(references(first_after_restart)) == TRACKER_TOOLS
    assert read_by(first_after_restart) > 1024
    assert recorder.of(CacheCollapse) == []
    [listed] = [r for m in result.messages for r in m.tool_results or []]
    assert listed.result.status == "success"


class WaitForListChange:
    """AnthropicModel, but the second call waits until the mount saw the server's list change
    (the notification travels on its own stream)."""

    def __init__(self, model: AnthropicModel, recorder: RecordingSubscriber) -> None:
        self.model = model
        self.recorder = recorder
        self.calls = 0

    @property
    def name(self) -> str:
        return self.model.name

    async def prompt(self, request: ModelRequest, notify: Notify, signal: Any = None) -> Any:
        self.calls += 1
        if self.calls == 2:
            await self.recorder.wait_for(McpListChanged)
        return await self.model.prompt(request, notify, signal)


async def test_a_tool_added_by_list_changed_is_deferred_and_loaded_by_the_next_results() -> None:
    recorder = RecordingSubscriber()
    async with serve(build_probe_server()) as url, serve_fake_anthropic() as fake:
        fake.script(
            FakeToolUse("probe__grow", {}, id="c1"),
            FakeToolUse("probe__steps", {"n": 1, "pause": 0}, id="c2"),
            FakeToolUse("probe__extra", {"word": "hi"}, id="c3"),
            "done",
        )
        entry = McpCatalogueEntry(id="probe", name="Probe", description="talks back", url=url)
        async with model_for(fake) as model:
            glove = Glove(WaitForListChange(model, recorder), SYSTEM, server_mode=True)
            glove.add_subscriber(recorder)
            async with await mount_mcp(glove, MemoryMcpAdapter("c", active=["probe"]), [entry]):
                glove.build()
                result = await glove.process_request("go")
    assert result.text == "done"
    calls = main_requests(fake)
    assert len(calls) == 4
    assert all(ordinary_tools(c) == ordinary_tools(calls[0]) for c in calls)
    assert "probe__extra" not in json.dumps(calls[0].body["tools"])
    assert deferred_names(calls[3]) == {"probe__extra"}
    assert references(calls[3]) == ["probe__extra"]
    for earlier, later in itertools.pairwise(calls):
        assert read_by(later) >= established_by(earlier)
    assert recorder.of(CacheCollapse) == []
    extra = next(r for m in result.messages for r in m.tool_results or [] if r.call_id == "c3")
    assert extra.result.data == {"result": "extra: hi"}


async def test_after_a_compaction_the_activated_tools_are_ordinary_and_still_callable(
    catalogue: list[McpCatalogueEntry],
) -> None:
    store = MemoryStore()
    async with serve_fake_anthropic() as fake:
        fake.script(
            *activation_script(),
            "Summary: the tracker is active and has open issues.",
            FakeToolUse("tracker__list_issues", {}, id="m4"),
            "Still open.",
        )
        async with model_for(fake) as model:
            glove = Glove(model=model, system_prompt=SYSTEM, store=store, server_mode=True)
            async with await mount_mcp(glove, MemoryMcpAdapter("c"), entries=catalogue):
                glove.build()
                await glove.process_request("what is open in the tracker?")
                history = await store.get_messages()
                await compact(glove, CompactionConfig(keep_last=0), history)
                result = await glove.process_request("and now?")
    assert result.text == "Still open."
    after = main_requests(fake)[-2]
    # The references went with the compacted history: the tools are ordinary now (part of the
    # new epoch's cached prefix), none is lost, and the call to one of them worked.
    assert deferred_names(after) == set()
    assert {t["name"] for t in after.body["tools"]} >= TRACKER_TOOLS
    assert references(after) == []
    [listed] = [r for m in result.messages for r in m.tool_results or []]
    assert listed.result.status == "success"


# --- bad inputs ------------------------------------------------------------------------------


def test_a_request_cannot_defer_a_tool_it_does_not_offer() -> None:
    spec = ToolSpec("known", "a tool", {"type": "object"})
    with pytest.raises(ValueError, match=r"deferred_tools must name tools of the request.*ghost"):
        ModelRequest(system="s", tools=[spec], messages=[], deferred_tools=frozenset({"ghost"}))


async def test_a_reference_to_a_tool_nobody_offers_is_logged_kept_and_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def loads_a_ghost(arguments: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        return ToolResultData(data="loaded", tool_references=["ghost"])

    store = MemoryStore()
    async with serve_fake_anthropic() as fake:
        fake.script(FakeToolUse("loader", {}, id="c1"), "done")
        async with model_for(fake) as model:
            glove = Glove(model=model, system_prompt=SYSTEM, store=store)
            glove.fold(
                Tool(
                    name="loader",
                    description="loads tools",
                    do=loads_a_ghost,
                    json_schema={"type": "object"},
                )
            )
            glove.build()
            result = await glove.process_request("go")
    assert result.text == "done"  # the API accepted every request
    assert references(fake.requests[-1]) == []
    assert "references tool 'ghost', which no tool source offers" in caplog.text
    [saved] = [r for m in await store.get_messages() for r in m.tool_results or []]
    assert saved.result.tool_references == ["ghost"]


async def test_every_tool_deferred_is_sent_ordinary_rather_than_refused() -> None:
    spec = ToolSpec("only", "the only tool", {"type": "object"})
    request = ModelRequest(
        system=SYSTEM,
        tools=[spec],
        messages=[Message(sender="user", text="hi")],
        deferred_tools=frozenset({"only"}),
    )
    recorder = RecordingSubscriber()
    async with serve_fake_anthropic() as fake:
        fake.script("hello")
        async with model_for(fake) as model:
            response = await model.prompt(request, recorder.record)
    assert response.message.text == "hello"
    assert deferred_names(fake.requests[-1]) == set()


async def test_the_fake_answers_deferral_mistakes_as_the_api_does() -> None:
    weather = {
        "name": "weather",
        "description": "the weather",
        "input_schema": {"type": "object"},
        "defer_loading": True,
    }
    async with serve_fake_anthropic() as fake:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=fake.base_url, max_retries=0)
        async with client:
            with pytest.raises(anthropic.BadRequestError, match="All tools have defer_loading"):
                await client.messages.create(
                    model="claude-test",
                    max_tokens=10,
                    tools=[weather],  # type: ignore[list-item]
                    messages=[{"role": "user", "content": "hi"}],
                )
            ordinary = {**weather, "name": "clock", "defer_loading": False}
            messages: list[Any] = [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "clock", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [{"type": "tool_reference", "tool_name": "nope"}],
                        }
                    ],
                },
            ]
            with pytest.raises(
                anthropic.BadRequestError,
                match="Tool reference 'nope' has no corresponding tool definition",
            ):
                await client.messages.create(
                    model="claude-test",
                    max_tokens=10,
                    tools=[ordinary, weather],  # type: ignore[list-item]
                    messages=messages,
                )


async def test_a_script_that_calls_an_unloaded_deferred_tool_fails_the_test() -> None:
    tools: list[Any] = [
        {"name": "clock", "description": "the time", "input_schema": {"type": "object"}},
        {
            "name": "weather",
            "description": "the weather",
            "input_schema": {"type": "object"},
            "defer_loading": True,
        },
    ]
    with pytest.raises(RuntimeError, match="the real model cannot see that tool"):
        async with serve_fake_anthropic() as fake:
            fake.script(FakeToolUse("weather", {}))
            client = anthropic.AsyncAnthropic(api_key="test", base_url=fake.base_url, max_retries=0)
            async with client:
                with pytest.raises(anthropic.InternalServerError):
                    await client.messages.create(
                        model="claude-test",
                        max_tokens=10,
                        tools=tools,
                        messages=[{"role": "user", "content": "hi"}],
                    )


async def test_defer_tools_off_sends_joined_tools_as_ordinary_ones() -> None:
    """For a gateway that refuses ``defer_loading``: the old behaviour, on request."""
    specs = [
        ToolSpec("a", "a tool", {"type": "object"}),
        ToolSpec("x", "joined", {"type": "object"}),
    ]
    call = ToolCall(id="c1", name="a", input={})
    loaded = ToolResult(
        call_id="c1", name="a", result=ToolResultData(data="ok", tool_references=["x"])
    )
    request = ModelRequest(
        system=SYSTEM,
        tools=specs,
        messages=[
            Message(sender="user", text="hi"),
            Message(sender="agent", tool_calls=[call]),
            Message(sender="user", tool_results=[loaded]),
        ],
        deferred_tools=frozenset({"x"}),
    )
    recorder = RecordingSubscriber()
    async with serve_fake_anthropic() as fake:
        fake.script("hello")
        model = AnthropicModel(
            "claude-test", api_key="test", base_url=fake.base_url, defer_tools=False
        )
        async with model:
            response = await model.prompt(request, recorder.record)
    assert response.message.text == "hello"
    assert deferred_names(fake.requests[-1]) == set()
    assert references(fake.requests[-1]) == []
    assert [t["name"] for t in fake.requests[-1].body["tools"]] == ["a", "x"]
