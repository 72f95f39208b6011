"""Issue 16, item 16: an event id containing U+001F must not hide later events.

The batch message id used to be ``sha256("\\x1f".join(ids))``: after an event ``"a\\x1fb"``
was delivered, a later batch of events ``a`` and ``b`` got the same message id, was taken for
already saved, and was marked injected without ever reaching the conversation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from glove_core import EventsConfig, Glove, MemoryStore, Message, ScriptedModel, SqliteEventQueue
from glove_core.event_queue import EventQueue, MemoryEventQueue, OutsideEvent
from glove_core.events import batch_message_id, format_events, legacy_batch_message_id


def _event_ids(messages: list[Message]) -> list[str]:
    return [
        line.split('"')[1]
        for m in messages
        if m.framework_context == "event"
        for line in m.text.splitlines()
        if line.startswith("<event id=")
    ]


def _event(event_id: str) -> OutsideEvent:
    return OutsideEvent(
        id=event_id, source="s", kind="k", content="c", received_at=datetime.now(UTC)
    )


@pytest.fixture(params=["memory", "sqlite"])
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> EventQueue:
    if request.param == "memory":
        return MemoryEventQueue()
    return SqliteEventQueue(tmp_path / "events.db", "c")


def test_the_batch_id_tells_a_joined_id_from_two_ids() -> None:
    joined = [_event("a\x1fb")]
    split = [_event("a"), _event("b")]
    assert legacy_batch_message_id(joined) == legacy_batch_message_id(split)  # the old bug
    assert batch_message_id(joined) != batch_message_id(split)


async def test_an_id_with_the_separator_does_not_swallow_later_events(queue: EventQueue) -> None:
    store = MemoryStore()
    model = ScriptedModel(["one", "two"])
    glove = Glove(model=model, system_prompt="s", store=store, events=EventsConfig(queue=queue))
    glove.build()
    await glove.emit_event(id="a\x1fb", source="x", kind="k", content="first", when_idle="defer")
    await glove.process_request("hello")
    await glove.emit_event(id="a", source="x", kind="k", content="A", when_idle="defer")
    await glove.emit_event(id="b", source="x", kind="k", content="B", when_idle="defer")
    await glove.process_request("again")

    saved = await store.get_messages()
    # U+001F cannot be written in XML; the formatter shows it as U+FFFD.
    assert _event_ids(saved) == ["a\ufffdb", "a", "b"]
    assert _event_ids(model.requests[1].messages) == ["a\ufffdb", "a", "b"]
    assert await queue.pending() == []
    await glove.aclose()
    if isinstance(queue, SqliteEventQueue):
        await queue.aclose()


async def test_a_batch_saved_by_an_older_glove_is_still_recognised(queue: EventQueue) -> None:
    # An older glove saved the batch under the legacy id, then died before marking it
    # injected: the upgraded glove must not deliver it a second time.
    store = MemoryStore()
    glove = Glove(
        model=ScriptedModel(["ok"]),
        system_prompt="s",
        store=store,
        events=EventsConfig(queue=queue),
    ).build()
    await glove.emit_event(id="e1", source="x", kind="k", content="c", when_idle="defer")
    pending = await queue.pending()
    old = format_events(pending).model_copy(update={"id": legacy_batch_message_id(pending)})
    await store.append_messages([old])
    await glove.process_request("after the upgrade")
    assert _event_ids(await store.get_messages()) == ["e1"]
    assert await queue.pending() == []
    await glove.aclose()
    if isinstance(queue, SqliteEventQueue):
        await queue.aclose()


async def test_a_legacy_batch_cannot_hide_later_events(queue: EventQueue) -> None:
    # The legacy id of batch [a, b] equals that of an older glove's batch ["a\x1fb"]; the
    # saved message reads differently, so a and b are still delivered.
    store = MemoryStore()
    old = format_events([_event("a\x1fb")])
    await store.append_messages(
        [old.model_copy(update={"id": legacy_batch_message_id([_event("a\x1fb")])})]
    )
    glove = Glove(
        model=ScriptedModel(["ok"]),
        system_prompt="s",
        store=store,
        events=EventsConfig(queue=queue),
    ).build()
    await glove.emit_event(id="a", source="x", kind="k", content="A", when_idle="defer")
    await glove.emit_event(id="b", source="x", kind="k", content="B", when_idle="defer")
    await glove.process_request("hello")
    assert _event_ids(await store.get_messages()) == ["a\ufffdb", "a", "b"]
    await glove.aclose()
    if isinstance(queue, SqliteEventQueue):
        await queue.aclose()
