"""DisplayManager: slots, waits, and the races between them."""

from __future__ import annotations

import asyncio

import pytest

from glove_core import AbortController, AbortError, DisplayManager, Slot
from glove_core.errors import SlotNotFoundError


async def shown(display: DisplayManager, count: int = 1) -> list[Slot]:
    """Wait until ``count`` slots are shown (woken by the display's own notifications)."""
    ready = asyncio.Event()

    def listener(slots: list[Slot]) -> None:
        if len(slots) >= count:
            ready.set()

    unsubscribe = display.subscribe(listener)
    try:
        listener(display.slots)
        await asyncio.wait_for(ready.wait(), 5)
    finally:
        unsubscribe()
    return display.slots


async def test_listener_may_resolve_synchronously() -> None:
    display = DisplayManager()

    def listener(slots: list[Slot]) -> None:
        for slot in slots:
            if slot.kind == "wait":
                display.resolve(slot.id, f"answer to {slot.input}")

    display.subscribe(listener)
    assert await display.push_and_wait("confirm", "q1") == "answer to q1"
    assert display.slots == []


async def test_concurrent_waits_resolve_independently() -> None:
    display = DisplayManager()
    first = asyncio.create_task(display.push_and_wait("pick", 1))
    second = asyncio.create_task(display.push_and_wait("pick", 2))
    by_input = {s.input: s.id for s in await shown(display, 2)}
    display.resolve(by_input[2], "two")
    display.resolve(by_input[1], "one")
    assert await first == "one"
    assert await second == "two"


async def test_reject_raises_in_the_waiting_tool() -> None:
    display = DisplayManager()
    task = asyncio.create_task(display.push_and_wait("confirm"))
    await shown(display)
    display.reject(display.slots[0].id, "closed by user")
    with pytest.raises(AbortError, match="closed by user"):
        await task
    custom = asyncio.create_task(display.push_and_wait("confirm"))
    await shown(display)
    display.reject(display.slots[0].id, LookupError("gone"))
    with pytest.raises(LookupError, match="gone"):
        await custom


async def test_double_resolve_and_unknown_ids_raise() -> None:
    display = DisplayManager()
    task = asyncio.create_task(display.push_and_wait("confirm"))
    await shown(display)
    slot_id = display.slots[0].id
    display.resolve(slot_id, True)
    with pytest.raises(SlotNotFoundError, match="already been resolved"):
        display.resolve(slot_id, False)
    assert await task is True
    with pytest.raises(SlotNotFoundError):
        display.reject("slot_unknown")


async def test_abort_removes_the_slot_and_late_resolve_fails() -> None:
    display = DisplayManager()
    controller = AbortController()
    task = asyncio.create_task(display.push_and_wait("confirm", signal=controller.signal))
    await shown(display)
    slot_id = display.slots[0].id
    controller.abort("request stopped")
    with pytest.raises(AbortError):
        await task
    assert display.slots == []
    with pytest.raises(SlotNotFoundError):
        display.resolve(slot_id, True)


async def test_forget_slots_subscribe_and_clear() -> None:
    display = DisplayManager()
    snapshots: list[list[str]] = []
    unsubscribe = display.subscribe(lambda slots: snapshots.append([s.renderer for s in slots]))
    a = await display.push_and_forget("card", {"title": "A"})
    await display.push_and_forget("card", {"title": "B"})
    with pytest.raises(SlotNotFoundError):
        display.resolve(a, None)  # forget slots cannot be resolved
    display.remove(a)
    display.clear()
    unsubscribe()
    await display.push_and_forget("unseen")
    assert snapshots == [["card"], ["card", "card"], ["card"], []]


async def test_a_raising_listener_does_not_block_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    display = DisplayManager()
    seen: list[int] = []

    def broken(slots: list[Slot]) -> None:
        raise RuntimeError("listener bug")

    display.subscribe(broken)
    display.subscribe(lambda slots: seen.append(len(slots)))
    await display.push_and_forget("card")
    assert seen == [1]
    assert "listener bug" in caplog.text
