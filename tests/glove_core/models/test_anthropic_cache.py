"""Prompt caching: where AnthropicModel puts breakpoints, what the fake reads back over a
conversation, and how a collapsed cache is reported."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from glove_core import Glove, tool
from glove_core.models import AnthropicModel
from glove_core.models.base import ModelRequest
from glove_core.subscribers import CacheCollapse, SubscriberEvent, TokenConsumption
from glove_core.testing import FakeAnthropicAPI, FakeToolUse
from glove_core.tools import ToolSpec
from glove_core.types import Message, ToolCall, ToolResult, ToolResultData
from tests.glove_core.models.conftest import SEARCH, Recorder

SYSTEM = "You are a careful assistant for the operations team. " * 400  # ~5,000 tokens
OTHER = ToolSpec("fetch", "Fetch a page.", {"type": "object", "properties": {}})


def _model(fake: FakeAnthropicAPI, **options: Any) -> AnthropicModel:
    return AnthropicModel(
        "claude-test", api_key="k", base_url=fake.base_url, clock=fake.now, **options
    )


def _turn(i: int) -> list[Message]:
    call = ToolCall(id=f"call_{i}", name="search", input={"q": f"topic {i}"})
    result = ToolResult(call_id=call.id, name="search", result=ToolResultData(data=f"found {i}"))
    return [
        Message(sender="agent", text=f"Looking up topic {i}.", tool_calls=[call]),
        Message(sender="user", tool_results=[result]),
    ]


def _request_with_all_layers() -> ModelRequest:
    messages = [
        Message(sender="user", text="first question"),
        Message(sender="agent", text="first answer"),
        Message(
            sender="user", text='<context key="plan">gold</context>', framework_context="runtime"
        ),
        Message(sender="user", text="request context: it is Monday", framework_context="runtime"),
        Message(sender="user", text="second question"),
        *_turn(1),
        Message(sender="user", text="iteration context: 3 unread", framework_context="runtime"),
    ]
    return ModelRequest(
        system=SYSTEM,
        tools=[SEARCH, OTHER],
        messages=messages,
        saved_count=len(messages) - 1,
        request_context_index=3,
    )


async def test_breakpoints_sit_on_tools_system_history_and_last_saved_block(
    fake: FakeAnthropicAPI,
) -> None:
    async with _model(fake) as model:
        await model.prompt(_request_with_all_layers(), Recorder())
    sent = fake.requests[0]
    # messages: 0 user, 1 assistant, 2 user [plan, request ctx, question],
    # 3 assistant [text, tool_use], 4 user [tool_result, iteration context]
    assert sent.cache_control_paths() == [
        "tools.1",
        "system.0",
        "messages.2.content.0",
        "messages.4.content.0",
    ]
    last = sent.body["messages"][4]["content"]
    assert last[1]["text"] == "iteration context: 3 unread"
    assert "cache_control" not in last[1]
    assert last[0]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}


async def test_without_request_context_three_breakpoints_and_ttl_1h(
    fake: FakeAnthropicAPI,
) -> None:
    request = _request_with_all_layers()
    request.request_context_index = None
    async with _model(fake, cache_ttl="1h") as model:
        await model.prompt(request, Recorder())
    sent = fake.requests[0]
    assert sent.cache_control_paths() == ["tools.1", "system.0", "messages.4.content.0"]
    assert sent.body["tools"][1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_cache_off_sends_no_breakpoints(fake: FakeAnthropicAPI) -> None:
    async with _model(fake, cache=False) as model:
        response = await model.prompt(_request_with_all_layers(), Recorder())
    assert fake.requests[0].cache_control_paths() == []
    assert response.usage.cache_read_tokens == 0 and response.usage.cache_write_tokens == 0


async def test_a_transient_only_tail_never_gets_a_breakpoint(fake: FakeAnthropicAPI) -> None:
    messages = [
        Message(sender="user", text="question"),
        Message(sender="agent", text="answer"),
        Message(sender="user", text="live state A", framework_context="runtime"),
        Message(sender="user", text="live state B", framework_context="runtime"),
    ]
    request = ModelRequest(system=SYSTEM, tools=[], messages=messages, saved_count=2)
    async with _model(fake) as model:
        await model.prompt(request, Recorder())
    assert fake.requests[0].cache_control_paths() == ["system.0", "messages.1.content.0"]


async def test_cache_reads_grow_over_ten_calls_with_changing_iteration_context(
    fake: FakeAnthropicAPI,
) -> None:
    recorder = Recorder()
    history: list[Message] = [Message(sender="user", text="Audit every service, one by one.")]
    reads: list[int] = []
    totals: list[int] = []
    async with _model(fake) as model:
        for call in range(10):
            transient = Message(
                sender="user",
                text=f"iteration context: clock tick {call}",
                framework_context="runtime",
            )
            request = ModelRequest(
                system=SYSTEM,
                tools=[SEARCH, OTHER],
                messages=[*history, transient],
                saved_count=len(history),
                conversation_id="conv-10",
            )
            response = await model.prompt(request, recorder)
            usage = response.usage
            reads.append(usage.cache_read_tokens)
            totals.append(usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens)
            history.extend(_turn(call))
    assert reads[0] == 0
    assert all(later > earlier for earlier, later in itertools.pairwise(reads))
    assert all(read / total >= 0.9 for read, total in zip(reads[1:], totals[1:], strict=True))
    assert recorder.of("cache_collapse") == []


async def test_full_glove_loop_reads_the_cache_across_turns(fake: FakeAnthropicAPI) -> None:
    @tool
    def lookup(service: str) -> str:
        """Look up a service's status.

        Args:
            service: the service name.
        """
        return f"{service}: healthy, 3 replicas"

    @tool
    def restart(service: str) -> str:
        """Restart a service.

        Args:
            service: the service name.
        """
        return f"{service} restarted"

    collected: list[SubscriberEvent] = []

    class Collector:
        async def record(self, event: SubscriberEvent) -> None:
            collected.append(event)

    ticks = iter(range(100))
    script: list[Any] = []
    for i in range(4):
        script.append(FakeToolUse("lookup", {"service": f"svc-{i}"}))
    script.append("All four services are healthy.")
    for i in range(4):
        script.append(FakeToolUse("restart", {"service": f"svc-{i}"}))
    script.append("Restarted them all.")
    fake.script(*script)
    async with _model(fake) as model:
        glove = Glove(model=model, system_prompt=SYSTEM).fold(lookup).fold(restart).build()
        glove.add_context_provider(
            lambda _signal: f"clock tick {next(ticks)}", delivery="iteration"
        )
        glove.add_subscriber(Collector())
        await glove.process_request("Check every service.")
        await glove.process_request("Now restart them.")
    assert len(fake.requests) == 10
    consumption = [e.usage for e in collected if isinstance(e, TokenConsumption)]
    assert len(consumption) == 10
    assert len([e for e in collected if e.kind == "token_consumption"]) == 10
    reads = [u.cache_read_tokens for u in consumption]
    assert reads[0] == 0
    assert all(later > earlier for earlier, later in itertools.pairwise(reads)), reads
    collapses = [e for e in collected if isinstance(e, CacheCollapse)]
    assert [c for c in collapses if c.cause == "unexpected"] == []
    transients = [r.body["messages"][-1]["content"][-1] for r in fake.requests]
    assert len({b["text"] for b in transients}) == 10
    assert all("cache_control" not in b for b in transients)


async def _two_calls(model: AnthropicModel, request: ModelRequest, recorder: Recorder) -> None:
    await model.prompt(request, recorder)
    await model.prompt(request, recorder)


async def test_idle_past_the_ttl_is_reported_as_ttl_expired(fake: FakeAnthropicAPI) -> None:
    recorder = Recorder()
    request = ModelRequest(
        system=SYSTEM, tools=[SEARCH], messages=[Message(sender="user", text="q")]
    )
    async with _model(fake) as model:
        await _two_calls(model, request, recorder)
        fake.advance_clock(301)
        await model.prompt(request, recorder)
    [collapse] = recorder.of("cache_collapse")
    assert isinstance(collapse, CacheCollapse) and collapse.cause == "ttl_expired"
    assert collapse.read_tokens == 0 and collapse.missed_tokens > 2000


async def test_a_compaction_is_reported_as_compacted(fake: FakeAnthropicAPI) -> None:
    recorder = Recorder()
    history = [
        Message(sender="user", text="long history " * 2000),
        Message(sender="agent", text="ok"),
    ]
    before = ModelRequest(system="short system", tools=[], messages=history)
    summary = Message(sender="user", text="Summary of the conversation so far.", is_compaction=True)
    after = ModelRequest(system="short system", tools=[], messages=[summary])
    async with _model(fake) as model:
        await _two_calls(model, before, recorder)
        await model.prompt(after, recorder)
    [collapse] = recorder.of("cache_collapse")
    assert collapse.cause == "compacted"


async def test_results_newly_sent_as_summaries_are_reported_as_summaries(
    fake: FakeAnthropicAPI, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder()
    history = [
        Message(sender="user", text="q"),
        Message(sender="agent", text="long answer " * 2000),
        Message(sender="user", text="next"),
    ]
    shortened = [history[0], Message(sender="agent", text="short"), history[2]]
    before = ModelRequest(system="short system", tools=[], messages=history)
    after = ModelRequest(system="short system", tools=[], messages=shortened, summarized=1)
    async with _model(fake) as model:
        await _two_calls(model, before, recorder)
        await model.prompt(after, recorder)
    [collapse] = recorder.of("cache_collapse")
    assert collapse.cause == "summaries" and "once per user turn" in collapse.detail
    assert "collapsed unexpectedly" not in caplog.text
    with pytest.raises(ValueError, match="summarized must be 0 or more, got -1"):
        ModelRequest(system="s", tools=[], messages=[], summarized=-1)


async def test_a_moved_prefix_is_reported_as_unexpected(
    fake: FakeAnthropicAPI, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder()
    messages = [Message(sender="user", text="q")]
    async with _model(fake) as model:
        request = ModelRequest(system=SYSTEM, tools=[], messages=messages, conversation_id="c1")
        await _two_calls(model, request, recorder)
        changed = ModelRequest(
            system="Live state: 12:04. " + SYSTEM,
            tools=[],
            messages=messages,
            conversation_id="c1",
        )
        await model.prompt(changed, recorder)
    [collapse] = recorder.of("cache_collapse")
    assert collapse.cause == "unexpected" and "system prompt changed" in collapse.detail
    assert "collapsed unexpectedly" in caplog.text


async def test_separate_conversations_do_not_look_like_collapses(fake: FakeAnthropicAPI) -> None:
    recorder = Recorder()
    async with _model(fake) as model:
        for conversation, system in (("a", SYSTEM), ("b", "Another agent. " * 900)) * 2:
            request = ModelRequest(
                system=system,
                tools=[],
                messages=[Message(sender="user", text="q")],
                conversation_id=conversation,
            )
            await model.prompt(request, recorder)
    assert recorder.of("cache_collapse") == []


async def test_many_parallel_tool_calls_still_read_the_previous_prefix(
    fake: FakeAnthropicAPI,
) -> None:
    """Twelve calls add 25 blocks, beyond the API's 20-block lookback: a spare breakpoint on
    the previous call's last saved block keeps the hit."""
    recorder = Recorder()
    history = [Message(sender="user", text="Audit the fleet. " * 3000)]
    established: list[int] = []
    async with _model(fake) as model:
        for width in (1, 12, 1):
            request = ModelRequest(
                system="short", tools=[], messages=list(history), conversation_id="wide"
            )
            response = await model.prompt(request, recorder)
            if established:
                assert response.usage.cache_read_tokens >= established[-1]
            established.append(response.usage.cache_read_tokens + response.usage.cache_write_tokens)
            calls = [
                ToolCall(id=f"w{width}_{i}_{len(history)}", name="search") for i in range(width)
            ]
            history.append(Message(sender="agent", text="Checking.", tool_calls=calls))
            results = [
                ToolResult(call_id=c.id, name="search", result=ToolResultData(data="ok " * 40))
                for c in calls
            ]
            history.append(Message(sender="user", tool_results=results))
    wide_call = fake.requests[2].cache_control_paths()
    assert wide_call == ["system.0", "messages.2.content.0", "messages.4.content.11"]
    assert recorder.of("cache_collapse") == []
