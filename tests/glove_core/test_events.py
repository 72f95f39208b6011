"""Outside events: queued mid-turn, woken or deferred while idle, never lost, never doubled."""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glove_core import (
    AbortSignal,
    EventsConfig,
    Glove,
    ImagePart,
    MemoryStore,
    Message,
    ModelRequest,
    ScriptedModel,
    SqliteEventQueue,
    TextPart,
    ToolCall,
    ToolContext,
    tool,
)
from glove_core.event_queue import MemoryEventQueue, OutsideEvent
from glove_core.events import EVENTS_NOTE, batch_message_id, format_events
from glove_core.subscribers import EventDropped, EventInjected
from glove_core.testing import RecordingSubscriber


def event_texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages if m.framework_context == "event"]


async def test_duplicate_ids_are_a_no_op() -> None:
    glove = Glove(model=ScriptedModel([]), system_prompt="s").build()
    first = await glove.emit_event(id="e1", source="ci", kind="k", content="x", when_idle="defer")
    again = await glove.emit_event(id="e1", source="ci", kind="k", content="y", when_idle="wake")
    assert (first, again) == ("deferred", "duplicate")
    await glove.aclose()


async def test_event_mid_turn_joins_after_the_tool_results_once() -> None:
    dispositions: list[str] = []

    @tool
    async def deploy(ctx: ToolContext) -> str:
        """Start a deploy."""
        dispositions.append(
            await ctx.glove.emit_event(
                id="d-41", source="webhook:ci", kind="build.finished", content="Build 812 is green."
            )
        )
        return "deploy started"

    store = MemoryStore()
    model = ScriptedModel([[ToolCall(id="c1", name="deploy")], "Deployed; build is green."])
    waiter = RecordingSubscriber()
    glove = Glove(model=model, system_prompt="s", store=store).fold(deploy).build()
    glove.add_subscriber(waiter)
    await glove.process_request("ship it")

    assert dispositions == ["queued"]
    saved = await store.get_messages()
    assert [m.sender for m in saved] == ["user", "agent", "user", "user", "agent"]
    assert saved[2].tool_results is not None
    assert saved[3].framework_context == "event"
    assert '<event id="d-41" source="webhook:ci" kind="build.finished"' in saved[3].text
    assert "Build 812 is green." in saved[3].text
    assert model.requests[1].messages[-1].framework_context == "event"
    injected = waiter.of(EventInjected)
    assert [(e.ids, e.where) for e in injected] == [(["d-41"], "tool_step")]
    await glove.aclose()


async def test_idle_wake_runs_a_turn_with_the_event_as_its_message() -> None:
    store = MemoryStore()
    waiter = RecordingSubscriber()
    model = ScriptedModel(["Noted the build."])
    glove = Glove(model=model, system_prompt="s", store=store).build()
    glove.add_subscriber(waiter)
    assert (
        await glove.emit_event(
            id="e1", source="ci", kind="build", content="green", when_idle="wake"
        )
        == "woke"
    )
    await waiter.wait_for("model_response_complete")
    await waiter.wait_for("token_consumption")
    saved = await store.get_messages()
    assert [m.framework_context for m in saved] == ["event", None]
    assert saved[0].id == batch_message_id(
        [OutsideEvent(id="e1", source="", kind="", content="", received_at=datetime.now(UTC))]
    )
    assert saved[1].text == "Noted the build."
    (injected,) = await waiter.wait_for("event_injected")
    assert injected.where == "wake"
    await glove.aclose()


async def test_deferred_event_is_saved_just_before_the_next_user_message() -> None:
    store = MemoryStore()
    model = ScriptedModel(["ok"])
    glove = Glove(model=model, system_prompt="s", store=store).build()
    assert (
        await glove.emit_event(
            id="e1", source="cal", kind="meeting.moved", content="3pm", when_idle="defer"
        )
        == "deferred"
    )
    await glove.process_request("what's next?")
    saved = await store.get_messages()
    assert [m.framework_context for m in saved] == ["event", None, None]
    assert saved[1].text == "what's next?"
    await glove.aclose()


async def test_auto_wakes_unless_the_user_was_recently_active() -> None:
    glove = Glove(
        model=ScriptedModel(["a"]), system_prompt="s", events=EventsConfig(user_activity_window=60)
    ).build()
    waiter = RecordingSubscriber()
    glove.add_subscriber(waiter)
    glove.notify_user_activity()
    assert await glove.emit_event(id="e1", source="s", kind="k", content="x") == "deferred"
    await glove.aclose()

    idle = Glove(model=ScriptedModel(["b"]), system_prompt="s").build()
    idle.add_subscriber(waiter)
    assert await idle.emit_event(id="e2", source="s", kind="k", content="x") == "woke"
    await waiter.wait_for("token_consumption")
    await idle.aclose()


async def test_a_deferred_event_wakes_the_agent_after_the_timeout() -> None:
    store = MemoryStore()
    waiter = RecordingSubscriber()
    glove = Glove(
        model=ScriptedModel(["handled"]),
        system_prompt="s",
        store=store,
        events=EventsConfig(defer_timeout=0.05),
    ).build()
    glove.add_subscriber(waiter)
    assert (
        await glove.emit_event(id="e1", source="s", kind="k", content="x", when_idle="defer")
        == "deferred"
    )
    (injected,) = await waiter.wait_for("event_injected")
    assert injected.where == "wake"
    await waiter.wait_for("token_consumption")
    assert [m.text for m in await store.get_messages()][-1] == "handled"
    await glove.aclose()


async def test_expired_events_are_dropped() -> None:
    waiter = RecordingSubscriber()
    store = MemoryStore()
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="s", store=store).build()
    glove.add_subscriber(waiter)
    past = datetime.now(UTC) - timedelta(seconds=1)
    assert (
        await glove.emit_event(id="old", source="s", kind="k", content="x", expires_at=past)
        == "dropped"
    )
    soon = datetime.now(UTC) + timedelta(milliseconds=20)
    assert (
        await glove.emit_event(
            id="soon", source="s", kind="k", content="x", when_idle="defer", expires_at=soon
        )
        == "deferred"
    )
    await asyncio.sleep(0.05)  # let it expire: the clock is what is under test here
    await glove.process_request("hello")
    dropped = [d.id for d in waiter.of(EventDropped)]
    assert dropped == ["old", "soon"]
    assert event_texts(await store.get_messages()) == []
    with pytest.raises(ValueError, match="timezone-aware"):
        await glove.emit_event(
            id="naive", source="s", kind="k", content="x", expires_at=datetime.now()
        )
    await glove.aclose()


async def test_event_during_the_final_answer_takes_the_idle_path() -> None:
    store = MemoryStore()
    waiter = RecordingSubscriber()
    dispositions: list[str] = []

    async def answer_while_event_arrives(request: ModelRequest) -> str:
        dispositions.append(
            await glove.emit_event(
                id="late", source="s", kind="k", content="late news", when_idle="wake"
            )
        )
        return "final answer"

    glove = Glove(
        model=ScriptedModel([answer_while_event_arrives, "saw the late news"]),
        system_prompt="s",
        store=store,
    ).build()
    glove.add_subscriber(waiter)
    await glove.process_request("question")
    assert dispositions == ["queued"]
    (injected,) = await waiter.wait_for("event_injected")
    assert injected.where == "wake"
    await waiter.wait_for("token_consumption", 2)
    saved = await store.get_messages()
    assert [m.text for m in saved][1:2] == ["final answer"]
    assert saved[2].framework_context == "event" and "late news" in saved[2].text
    assert saved[3].text == "saw the late news"
    await glove.aclose()


async def test_wake_and_queued_request_never_interleave() -> None:
    store = MemoryStore()
    model = ScriptedModel(["reply 1", "reply 2"], latency=0.01)
    glove = Glove(model=model, system_prompt="s", store=store).build()
    assert (
        await glove.emit_event(id="e1", source="s", kind="k", content="x", when_idle="wake")
        == "woke"
    )
    # The user's request takes the turn before the wake-up does; it delivers the event just
    # before its own message, and the wake-up then finds nothing left to do.
    result = await glove.process_request("hi")
    await glove.wait_for_wakeups()
    saved = await store.get_messages()
    assert [(m.sender, m.framework_context) for m in saved] == [
        ("user", "event"),
        ("user", None),
        ("agent", None),
    ]
    assert result.text == "reply 1"
    assert len(model.requests) == 1
    await glove.aclose()


async def test_wake_waits_for_a_running_turn() -> None:
    store = MemoryStore()
    waiter = RecordingSubscriber()
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        started.set()
        await release.wait()
        return "user reply"

    glove = Glove(model=ScriptedModel([slow, "woke reply"]), system_prompt="s", store=store).build()
    glove.add_subscriber(waiter)
    turn = asyncio.create_task(glove.process_request("hi"))
    await started.wait()
    assert (
        await glove.emit_event(id="e1", source="s", kind="k", content="x", when_idle="wake")
        == "queued"
    )
    release.set()
    await turn
    await waiter.wait_for("token_consumption", 2)
    saved = await store.get_messages()
    assert [(m.sender, m.framework_context, m.text) for m in saved][1:] == [
        ("agent", None, "user reply"),
        ("user", "event", saved[2].text),
        ("agent", None, "woke reply"),
    ]
    await glove.aclose()


async def test_turn_preparers_run_before_requests_and_wakes() -> None:
    calls: list[str] = []
    waiter = RecordingSubscriber()

    async def prepare(signal: AbortSignal) -> None:
        calls.append("prepared")

    glove = Glove(model=ScriptedModel(["a", "b", "c"]), system_prompt="s").build()
    glove.add_subscriber(waiter)
    remove = glove.add_turn_preparer(prepare)
    await glove.process_request("one")
    await glove.emit_event(id="e", source="s", kind="k", content="x", when_idle="wake")
    await waiter.wait_for("token_consumption", 2)
    remove()
    await glove.process_request("two")
    assert calls == ["prepared", "prepared"]
    await glove.aclose()


async def test_failed_wake_is_reported_and_the_event_is_kept() -> None:
    waiter = RecordingSubscriber()
    store = MemoryStore()
    glove = Glove(model=ScriptedModel([]), system_prompt="s", store=store).build()
    glove.add_subscriber(waiter)
    await glove.emit_event(id="e1", source="s", kind="k", content="x", when_idle="wake")
    (failed,) = await waiter.wait_for("event_wake_failed")
    assert failed.ids == ["e1"] and "ScriptExhaustedError" in failed.error
    assert event_texts(await store.get_messages()) != []  # saved: the next turn sees it
    await glove.aclose()


async def test_sqlite_queue_survives_restart_and_delivers_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = MemoryStore()
    first = Glove(
        model=ScriptedModel([]),
        system_prompt="s",
        store=store,
        events=EventsConfig(queue=SqliteEventQueue(path, "conv")),
    ).build()
    assert (
        await first.emit_event(id="e1", source="s", kind="k", content="x", when_idle="defer")
        == "deferred"
    )
    await first.aclose()

    second = Glove(
        model=ScriptedModel(["a", "b"]),
        system_prompt="s",
        store=store,
        events=EventsConfig(queue=SqliteEventQueue(path, "conv")),
    ).build()
    assert await second.emit_event(id="e1", source="s", kind="k", content="x") == "duplicate"
    await second.process_request("one")
    await second.process_request("two")
    assert len(event_texts(await store.get_messages())) == 1
    other = SqliteEventQueue(path, "other-conversation")
    assert await other.pending() == []
    await second.aclose()


async def test_a_batch_saved_before_a_crash_is_not_saved_again() -> None:
    queue = SqliteEventQueue(":memory:", "c")  # a fresh in-memory file per connection
    del queue
    store = MemoryStore()
    events = MemoryEventQueue()
    glove = Glove(
        model=ScriptedModel(["ok"]),
        system_prompt="s",
        store=store,
        events=EventsConfig(queue=events),
    ).build()
    await glove.emit_event(id="e1", source="s", kind="k", content="x", when_idle="defer")
    pending = await events.pending()
    # The process saved the batch (as the default formatter renders it, under the id derived
    # from its events), then died before marking it injected.
    batch = format_events(pending).model_copy(update={"id": batch_message_id(pending)})
    await store.append_messages([batch])
    await glove.process_request("after restart")
    assert len(event_texts(await store.get_messages())) == 1
    assert await events.pending() == []
    await glove.aclose()


def test_events_config_validation() -> None:
    with pytest.raises(ValueError, match="defer_timeout must be > 0"):
        EventsConfig(defer_timeout=0)
    with pytest.raises(ValueError, match="user_activity_window must be >= 0"):
        EventsConfig(user_activity_window=-1)


def test_media_stays_next_to_its_event() -> None:
    image = ImagePart(media_type="image/png", data="AAAA")
    now = datetime(2026, 10, 28, 13, 20, tzinfo=UTC)
    message = format_events(
        [
            OutsideEvent(
                id="a",
                source="cam",
                kind="snap",
                content=[TextPart(text="door"), image],
                received_at=now,
            ),
            OutsideEvent(id="b", source="ci", kind="k", content="text only", received_at=now),
        ]
    )
    assert message.content is not None
    kinds = [p.type for p in message.content]
    assert kinds == ["text", "image", "text"]
    first = message.content[0]
    assert isinstance(first, TextPart) and first.text.endswith("door")
    assert 'received_at="2026-10-28T13:20:00Z"' in first.text


xml_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@given(st.lists(st.tuples(xml_text, xml_text, xml_text, xml_text), min_size=1, max_size=4))
def test_formatted_events_are_inert_xml(raw: list[tuple[str, str, str, str]]) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    events = [
        OutsideEvent(id=f"{i}{eid}", source=src, kind=kind, content=body, received_at=now)
        for i, (eid, src, kind, body) in enumerate(raw)
    ]
    root = ET.fromstring(format_events(events).text)
    assert root.tag == "events" and root.attrib == {"note": EVENTS_NOTE}
    children = list(root)
    assert [c.tag for c in children] == ["event"] * len(events)
    for child, event in zip(children, events, strict=True):
        assert len(list(child)) == 0  # content could not open or close tags
        assert child.attrib["id"] == _clean(event.id)
        assert child.attrib["source"] == _clean(event.source)
        assert child.attrib["kind"] == _clean(event.kind)
        assert isinstance(event.content, str)
        assert (child.text or "") == "\n" + _clean(event.content) + "\n"


# What XML 1.0 cannot carry (the spec's Char production): the formatter replaces it.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)
