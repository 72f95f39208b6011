"""AbortController / AbortSignal."""

from __future__ import annotations

import asyncio

import pytest

from glove_core import AbortController, AbortError


async def test_signal_fires_once_with_reason_and_callbacks() -> None:
    controller = AbortController()
    signal = controller.signal
    seen: list[object] = []
    remove = signal.add_callback(seen.append)
    removed: list[object] = []
    signal.add_callback(removed.append)()  # removed at once
    assert bool(signal.aborted) is False
    signal.throw_if_aborted()
    controller.abort("stop")
    controller.abort("again")  # no effect
    assert signal.aborted and signal.reason == "stop"
    assert seen == ["stop"] and removed == []
    remove()
    late: list[object] = []
    signal.add_callback(late.append)  # called at once when already aborted
    assert late == ["stop"]
    with pytest.raises(AbortError, match="aborted: stop"):
        signal.throw_if_aborted()
    assert await signal.wait() == "stop"


async def test_wait_returns_when_aborted() -> None:
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await asyncio.sleep(0)
    controller.abort(42)
    assert await waiter == 42


async def test_race_cancels_the_inner_work() -> None:
    controller = AbortController()
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def work() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    task = asyncio.create_task(controller.signal.race(work()))
    await started.wait()
    controller.abort("bye")
    with pytest.raises(AbortError, match="bye"):
        await task
    assert cancelled.is_set()


async def test_race_returns_the_result_and_propagates_errors() -> None:
    signal = AbortController().signal

    async def ok() -> int:
        return 1

    async def bad() -> int:
        raise KeyError("x")

    assert await signal.race(ok()) == 1
    with pytest.raises(KeyError):
        await signal.race(bad())


async def test_race_on_an_aborted_signal_raises_before_starting() -> None:
    controller = AbortController()
    controller.abort()
    started = False

    async def work() -> None:
        nonlocal started
        started = True

    coro = work()
    with pytest.raises(AbortError):
        await controller.signal.race(coro)
    coro.close()
    assert not started


async def test_outer_cancellation_is_not_turned_into_abort() -> None:
    signal = AbortController().signal
    task = asyncio.create_task(signal.race(asyncio.Event().wait()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_callback_errors_are_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    controller = AbortController()

    def broken(reason: object) -> None:
        raise RuntimeError("callback bug")

    after: list[object] = []
    controller.signal.add_callback(broken)
    controller.signal.add_callback(after.append)
    controller.abort("x")
    assert after == ["x"]
    assert "callback bug" in caplog.text
