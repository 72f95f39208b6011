"""Issue 16, item 4: two processes on one conversation take turns instead of interleaving.

``SqliteStore`` made each write atomic, not each turn: two processes running requests with
tool calls on one session interleaved their messages (tool calls followed by the other
process's messages, and calls "repaired" as interrupted while the other process was still
running them, then answered twice). A Glove now holds the store's per-conversation turn lock
(an ``flock`` the kernel releases when the holder dies) for each whole turn.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from glove_core import (
    AbortController,
    AbortError,
    AbortSignal,
    Glove,
    Message,
    ScriptedModel,
    SqliteStore,
    TurnLockStore,
)
from glove_core.errors import ConversationLockedError
from glove_core.stores._turn_lock import lock_file_path
from tests._backends import Backend, store_at
from tests.glove_core.stores.test_sqlite_processes import (
    CHILD_TIMEOUT,
    assert_every_tool_use_answered,
    read_line,
    spawn,
)

REQUESTS = 20


def assert_turns_did_not_interleave(messages: list[Message], tags: tuple[str, ...]) -> None:
    # Every turn is exactly: request, tool call, its result, answer — never mixed with another.
    assert len(messages) == 4 * REQUESTS * len(tags)
    answered: list[str] = []
    for start in range(0, len(messages), 4):
        request, call, results, answer = messages[start : start + 4]
        tag, _, index = request.text.partition(" request ")
        assert tag in tags, request
        assert call.tool_calls is not None and [c.id for c in call.tool_calls] == [
            f"{tag}-{index}"
        ], messages[start : start + 4]
        assert results.tool_results is not None
        assert [r.call_id for r in results.tool_results] == [f"{tag}-{index}"]
        assert results.tool_results[0].result.status == "success"
        assert answer.text == f"{tag} done {index}"
        answered.append(f"{tag}-{index}")
    for tag in tags:
        assert [a for a in answered if a.startswith(f"{tag}-")] == [
            f"{tag}-{n}" for n in range(REQUESTS)
        ]


async def test_two_processes_on_one_conversation_take_turns(backend: Backend) -> None:
    path = backend.where
    tags = ("p1", "p2")
    procs = [await spawn("turns", path, tag, str(REQUESTS)) for tag in tags]
    for proc in procs:
        assert await read_line(proc) == "READY"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(b"GO\n")
        await proc.stdin.drain()
    for proc in procs:
        out, err = await asyncio.wait_for(proc.communicate(), CHILD_TIMEOUT)
        assert proc.returncode == 0, err.decode()
        assert out.decode().split() == ["DONE"]

    async with store_at(path, "shared") as store:
        messages = await store.get_messages()
    assert_every_tool_use_answered(messages)
    assert_turns_did_not_interleave(messages, tags)


async def test_a_holder_killed_mid_turn_releases_the_lock_and_the_next_turn_repairs(
    backend: Backend,
) -> None:
    path = backend.where
    proc = await spawn("crash", path, "s")
    try:
        assert await read_line(proc) == "TOOL_STARTED"  # the child is inside its turn
        async with store_at(path, "s", turn_lock_timeout=0) as impatient:
            before = await impatient.get_messages()
            glove = Glove(model=ScriptedModel(["never sent"]), system_prompt="s", store=impatient)
            with pytest.raises(ConversationLockedError, match="held by another process") as info:
                await glove.build().process_request("are you there?")
            assert info.value.conversation_id == "s"
            # The refused turn saved nothing and repaired nothing: the call is still running.
            assert await impatient.get_messages() == before
            assert before[-1].tool_calls is not None
    finally:
        proc.send_signal(signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), CHILD_TIMEOUT)

    async with store_at(path, "s") as store:
        model = ScriptedModel(["I am back."])
        glove = Glove(model=model, system_prompt="s", store=store).build()
        result = await asyncio.wait_for(glove.process_request("are you there?"), CHILD_TIMEOUT)
        assert result.text == "I am back."
        saved = await store.get_messages()
        assert_every_tool_use_answered(saved)
        repaired = saved[2].tool_results
        assert repaired is not None and repaired[0].result.status == "aborted"
        assert "process stopped" in (repaired[0].result.message or "")


async def test_two_store_objects_in_one_process_exclude_each_other(backend: Backend) -> None:
    first = await backend.store("c")
    second = await backend.store("c", turn_lock_timeout=0, fresh=True)
    other = await backend.store("another", turn_lock_timeout=0)
    assert isinstance(first, TurnLockStore)
    async with first.turn_lock(AbortController().signal):
        with pytest.raises(ConversationLockedError):
            async with second.turn_lock(AbortController().signal):
                pass
        async with other.turn_lock(AbortController().signal):
            pass  # another conversation never waits
    async with second.turn_lock(AbortController().signal):
        pass  # released


async def test_an_abort_or_a_cancel_ends_the_wait_and_leaks_no_lock(backend: Backend) -> None:
    holder = await backend.store("c")
    waiter = await backend.store("c", turn_lock_timeout=None, fresh=True)
    controller = AbortController()
    started = asyncio.Event()

    async def wait_for_turn(signal: AbortSignal) -> None:
        started.set()
        async with waiter.turn_lock(signal):
            pass

    async with holder.turn_lock(AbortController().signal):
        task = asyncio.create_task(wait_for_turn(controller.signal))
        await started.wait()
        controller.abort("user left")
        with pytest.raises(AbortError):
            await task
        started.clear()
        cancelled = asyncio.create_task(wait_for_turn(AbortController().signal))
        await started.wait()
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
    # Neither waiter kept the lock: an impatient third one gets it at once.
    third = await backend.store("c", turn_lock_timeout=0, fresh=True)
    async with third.turn_lock(AbortController().signal):
        pass


def test_lock_files_are_named_safely(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    folder = f"{db}-turns"
    names = {
        lock_file_path(db, conversation)
        for conversation in ("../../etc/passwd", "a/b", "a_b", "a b", ".hidden", "x" * 500, "é")
    }
    assert len(names) == 7
    for name in names:
        assert os.path.dirname(name) == folder
        assert len(os.path.basename(name)) < 100


def test_the_timeout_is_validated(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="turn_lock_timeout must be 0 or more seconds"):
        SqliteStore(tmp_path / "x.db", "c", turn_lock_timeout=-1)
