"""The cross-process lock of the OAuth file and keyring stores (glove_mcp.oauth._filelock):
exclusive across instances, re-entrant within a task, and a cancelled waiter leaves nothing
taken. Across real processes it is exercised by test_token_source's two-process refresh."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from glove_mcp.oauth._filelock import FileLock


async def test_two_instances_on_one_file_take_turns(tmp_path: Path) -> None:
    path = tmp_path / "state.lock"
    first, second = FileLock(path), FileLock(path)
    order: list[str] = []
    inside = asyncio.Event()

    async def hold_first() -> None:
        async with first.hold():
            inside.set()
            order.append("first in")
            # Give the second instance time to try while the file is locked.
            await asyncio.sleep(0.05)
            order.append("first out")

    async def hold_second() -> None:
        await inside.wait()
        async with second.hold():
            order.append("second in")

    await asyncio.gather(hold_first(), hold_second())
    assert order == ["first in", "first out", "second in"]


async def test_the_lock_is_reentrant_within_a_task_and_its_children(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "state.lock")

    async def child() -> str:
        async with lock.hold():
            return "child got it"

    async with lock.hold(), lock.hold():
        assert await asyncio.create_task(child()) == "child got it"


async def test_a_cancelled_waiter_leaves_the_lock_free(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "state.lock"
    holder, waiter, later = FileLock(path), FileLock(path), FileLock(path)
    async with holder.hold():
        waiting = asyncio.create_task(waiter.hold().__aenter__())
        await asyncio.sleep(0.02)
        waiting.cancel()
        done, _ = await asyncio.wait({waiting})
        assert waiting in done and waiting.cancelled()
    async with asyncio.timeout(5), later.hold():
        pass
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
