"""Issue 16, item 21: outside events and context items have total size limits.

Through the Python API an event of any size went to the model (10 MB was seen), and 300
context items of 32 KB each were saved as one 11 MB message. Now an event is bounded by
``EventsConfig.max_event_bytes``, the events waiting by ``max_pending_events`` and
``max_pending_bytes``, and the context items waiting for the next model call by
``Glove(max_context_bytes=)``; a refused call raises a typed error and records nothing.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from glove_core import (
    EventsConfig,
    Glove,
    MemoryStore,
    ScriptedModel,
    SqliteEventQueue,
    notice,
)
from glove_core.context_items import MAX_CONTEXT_ITEM_BYTES, MAX_CONTEXT_PENDING_BYTES
from glove_core.errors import (
    ContextItemError,
    EventQueueFullError,
    EventRefusedError,
    EventTooLargeError,
)
from glove_core.event_queue import EventQueue, MemoryEventQueue
from glove_mcp.server import HeadlessServer, SessionStore
from tests.glove_mcp.server.test_app import AUTH, KEY, running

MB = 1024 * 1024


@pytest.fixture(params=["memory", "sqlite"])
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> EventQueue:
    if request.param == "memory":
        return MemoryEventQueue()
    return SqliteEventQueue(tmp_path / "events.db", "c")


async def _close(queue: EventQueue) -> None:
    if isinstance(queue, SqliteEventQueue):
        await queue.aclose()


async def test_an_event_of_megabytes_is_refused_and_nothing_is_queued(queue: EventQueue) -> None:
    store = MemoryStore()
    model = ScriptedModel(["ok"])
    glove = Glove(model=model, system_prompt="s", store=store, events=EventsConfig(queue=queue))
    glove.build()
    with pytest.raises(EventTooLargeError, match=r"over the 262144-byte limit") as caught:
        await glove.emit_event(id="big", source="s", kind="k", content="x" * (3 * MB))
    assert isinstance(caught.value, ValueError)
    assert caught.value.size == 3 * MB + len("big") + 2
    assert await queue.pending() == []
    await glove.process_request("hi")
    assert len(model.requests) == 1
    assert all(len(m.text) < 1000 for m in model.requests[0].messages)
    # Refused, not remembered: the same id goes through once it is small enough.
    small = await glove.emit_event(id="big", source="s", kind="k", content="c", when_idle="defer")
    assert small == "deferred"
    await glove.aclose()
    await _close(queue)


async def test_the_event_limit_counts_id_source_kind_and_content(queue: EventQueue) -> None:
    glove = Glove(
        model=ScriptedModel([]),
        system_prompt="s",
        events=EventsConfig(queue=queue, max_event_bytes=100),
    ).build()
    # 3 bytes of id, source and kind + 97 of content (48 two-byte characters and one more).
    assert await glove.emit_event(
        id="e", source="s", kind="k", content="é" * 48 + "x", when_idle="defer"
    )
    with pytest.raises(EventTooLargeError, match="100-byte limit"):
        await glove.emit_event(id="e2", source="s", kind="k", content="é" * 49)
    with pytest.raises(EventTooLargeError):
        await glove.emit_event(id="i" * 101, source="s", kind="k", content="c")
    assert [e.id for e in await queue.pending()] == ["e"]
    await glove.aclose()
    await _close(queue)


async def test_many_small_events_fill_the_queue_until_a_turn_takes_them(
    queue: EventQueue,
) -> None:
    store = MemoryStore()
    config = EventsConfig(queue=queue, max_pending_events=5)
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="s", store=store, events=config)
    glove.build()
    for n in range(5):
        await glove.emit_event(id=f"e{n}", source="s", kind="k", content="c", when_idle="defer")
    with pytest.raises(EventQueueFullError, match=r"5 events already wait.*max_pending_events"):
        await glove.emit_event(id="e5", source="s", kind="k", content="c", when_idle="defer")
    assert len(await queue.pending()) == 5
    await glove.process_request("hi")  # saves the five deferred events
    assert await glove.emit_event(id="e5", source="s", kind="k", content="c") in (
        "woke",
        "deferred",
    )
    await glove.aclose()
    await _close(queue)


async def test_the_bytes_waiting_are_bounded_too(queue: EventQueue) -> None:
    config = EventsConfig(queue=queue, max_pending_bytes=64 * 1024)
    glove = Glove(model=ScriptedModel([]), system_prompt="s", events=config).build()
    for n in range(3):
        await glove.emit_event(
            id=f"e{n}", source="s", kind="k", content="x" * 20_000, when_idle="defer"
        )
    with pytest.raises(EventQueueFullError, match="max_pending_bytes") as caught:
        await glove.emit_event(id="e3", source="s", kind="k", content="x" * 20_000)
    assert isinstance(caught.value, EventRefusedError)
    assert len(await queue.pending()) == 3
    await glove.aclose()
    await _close(queue)


@pytest.mark.parametrize("field", ["max_event_bytes", "max_pending_events", "max_pending_bytes"])
def test_event_limits_are_validated(field: str) -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match=f"{field} must be a whole number of at least 1"):
            EventsConfig(**{field: bad})  # type: ignore[arg-type]


async def test_300_items_of_32_kb_are_refused_and_nothing_is_recorded() -> None:
    store = MemoryStore()
    model = ScriptedModel(["ok"])
    glove = Glove(model=model, system_prompt="s", store=store).build()
    item = notice("n" * (MAX_CONTEXT_ITEM_BYTES - 100))
    with pytest.raises(ContextItemError, match=r"300 item\(s\) of \d+ bytes, over the 262144"):
        await glove.add_context([item] * 300)
    assert glove.pending_context() == []
    await glove.process_request("hi")
    assert [m for m in await store.get_messages() if m.framework_context == "runtime"] == []


async def test_items_added_call_by_call_are_bounded_as_one_message() -> None:
    store = MemoryStore()
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="s", store=store).build()
    item = notice("n" * (MAX_CONTEXT_ITEM_BYTES - 100))
    accepted = 0
    with pytest.raises(ContextItemError, match="bytes already wait"):
        for _ in range(300):
            await glove.add_context([item])
            accepted += 1
    assert 0 < accepted < 300
    assert len(glove.pending_context()) == accepted
    await glove.process_request("hi")
    [saved] = [m for m in await store.get_messages() if m.framework_context == "runtime"]
    assert len(saved.text.encode()) <= MAX_CONTEXT_PENDING_BYTES
    # Saved, so the room is free again.
    assert await glove.add_context([item]) == 1


async def test_the_context_limit_is_configurable_and_validated() -> None:
    glove = Glove(model=ScriptedModel([]), system_prompt="s", max_context_bytes=200).build()
    assert await glove.add_context([notice("short")]) == 1
    with pytest.raises(ContextItemError, match="200-byte limit"):
        await glove.add_context([notice("x" * 200)])
    for bad in (0, -5):
        with pytest.raises(ValueError, match="max_context_bytes must be a whole number"):
            Glove(model=ScriptedModel([]), system_prompt="s", max_context_bytes=bad)


async def test_the_headless_server_answers_413_and_429(tmp_path: Path) -> None:
    def factory(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        config = EventsConfig(max_event_bytes=1000, max_pending_events=1)
        return Glove(
            model=ScriptedModel([]), system_prompt="s", store=store, server_mode=True, events=config
        )

    server = HeadlessServer(str(tmp_path / "s.db"), KEY, factory)
    async with running(server) as client:
        await client.post("/sessions", headers=AUTH, json={"id": "s1"})
        event = {"source": "ci", "kind": "k", "when_idle": "defer"}
        big = await client.post(
            "/sessions/s1/events", headers=AUTH, json={**event, "id": "e0", "content": "x" * 2000}
        )
        assert big.status_code == 413
        assert "over the 1000-byte limit" in big.json()["error"]
        first = await client.post(
            "/sessions/s1/events", headers=AUTH, json={**event, "id": "e1", "content": "c"}
        )
        assert first.json() == {"disposition": "deferred"}
        full = await client.post(
            "/sessions/s1/events", headers=AUTH, json={**event, "id": "e2", "content": "c"}
        )
        assert full.status_code == 429
        assert "max_pending_events" in full.json()["error"]
