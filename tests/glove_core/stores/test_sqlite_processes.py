"""SqliteStore across processes: restart, SIGKILL mid-tool, concurrent writers, outside resolve."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from glove_core import (
    CompactionConfig,
    Glove,
    InboxItem,
    Message,
    ScriptedModel,
    Slot,
    SqliteStore,
    Task,
    Tool,
    ToolCall,
    ToolContext,
    Usage,
)
from glove_core.builtin import take_resolved_inbox
from glove_core.compaction import compact
from glove_core.models.base import ModelRequest
from tests._backends import Backend, store_at

REPO = Path(__file__).resolve().parents[3]
# Generous: only reached when a child hangs, so the test fails instead of blocking the suite.
CHILD_TIMEOUT = 60.0


async def spawn(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.glove_core.stores._proc",
        *args,
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def read_line(proc: asyncio.subprocess.Process) -> str:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), CHILD_TIMEOUT)
    if not line:
        assert proc.stderr is not None
        raise AssertionError(f"child exited early: {(await proc.stderr.read()).decode()}")
    return line.decode().strip()


def assert_every_tool_use_answered(messages: list[Message]) -> None:
    for index, message in enumerate(messages):
        if message.sender == "agent" and message.tool_calls:
            following = messages[index + 1]
            answered = {r.call_id for r in following.tool_results or []}
            assert answered == {c.id for c in message.tool_calls}, (index, messages)


async def test_two_processes_appending_to_one_file_lose_nothing(backend: Backend) -> None:
    path = backend.where
    count = 150
    # Both write session "shared" and each its own session, in lockstep after GO.
    procs = [await spawn("append", path, tag, str(count)) for tag in ("p1", "p2")]
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

    async with store_at(path, "shared") as shared:
        texts = [m.text for m in await shared.get_messages()]
        assert len(texts) == 2 * count
        for tag in ("p1", "p2"):
            assert [t for t in texts if t.startswith(f"{tag}:")] == [
                f"{tag}:{n}" for n in range(count)
            ]
        assert await shared.get_usage() == Usage(input_tokens=2 * count, output_tokens=4 * count)
        assert await shared.get_turn_count() == 2 * count
    for tag in ("p1", "p2"):
        async with store_at(path, tag) as own:
            assert [m.text for m in await own.get_messages()] == [f"own:{n}" for n in range(count)]
    if backend.kind == "postgres":
        return  # listing sessions is a helper of SQLite files (outside processes)
    sessions = await SqliteStore.list_sessions(path)
    assert sorted((s.session_id, s.message_count) for s in sessions) == [
        ("p1", count),
        ("p2", count),
        ("shared", 2 * count),
    ]


async def test_a_process_killed_mid_tool_leaves_a_usable_conversation(backend: Backend) -> None:
    path = backend.where
    proc = await spawn("crash", path, "s")
    assert await read_line(proc) == "TOOL_STARTED"
    proc.send_signal(signal.SIGKILL)
    await asyncio.wait_for(proc.wait(), CHILD_TIMEOUT)
    assert proc.returncode == -signal.SIGKILL

    async with store_at(path, "s") as store:
        saved = await store.get_messages()
        assert [m.sender for m in saved] == ["user", "agent"]
        assert saved[1].tool_calls == [ToolCall(id="call_slow", name="slow_tool", input={})]

        model = ScriptedModel(["I am back."])
        glove = Glove(model=model, system_prompt="s", store=store).build()
        result = await glove.process_request("are you there?")

        assert result.text == "I am back."
        sent = model.requests[0].messages
        assert [m.text for m in sent if m.sender == "user" and not m.tool_results] == [
            "start the slow tool",
            "are you there?",
        ]
        assert_every_tool_use_answered(sent)
        after = await store.get_messages()
        assert_every_tool_use_answered(after)
        repaired = after[2].tool_results
        assert repaired is not None and repaired[0].result.status == "aborted"
        assert "process stopped" in (repaired[0].result.message or "")


async def test_inbox_item_resolved_by_another_process(tmp_path: Path) -> None:
    path = str(tmp_path / "inbox.db")
    async with SqliteStore(path, "s") as store:
        model = ScriptedModel(
            [
                [
                    ToolCall(
                        id="c1",
                        name="glove_post_to_inbox",
                        input={"tag": "restock", "request": "tell me when oat milk is back"},
                    )
                ],
                "I'll let you know.",
            ]
        )
        glove = Glove(model=model, system_prompt="s", store=store).build()
        await glove.process_request("watch the oat milk")
        [item] = await store.get_inbox_items()
        assert (item.tag, item.status, item.blocking) == ("restock", "pending", False)

        proc = await spawn("resolve", path, item.id, "Oat milk is back in stock.")
        out, err = await asyncio.wait_for(proc.communicate(), CHILD_TIMEOUT)
        assert proc.returncode == 0, err.decode()
        assert InboxItem.model_validate_json(out).status == "resolved"

        delivered = await take_resolved_inbox(store)
        assert delivered is not None
        assert delivered.framework_context == "inbox"
        assert "Oat milk is back in stock." in delivered.text
        assert "tell me when oat milk is back" in delivered.text
        assert await take_resolved_inbox(store) is None
        assert [i.status for i in await store.get_inbox_items()] == ["consumed"]

    async with SqliteStore(path, "s") as reopened:
        saved = await reopened.get_messages()
        assert [m.id for m in saved if m.framework_context == "inbox"] == [delivered.id]


async def test_a_new_glove_on_the_same_file_continues_the_conversation(tmp_path: Path) -> None:
    path = str(tmp_path / "restart.db")
    tasks_call = ToolCall(
        id="c1",
        name="glove_update_tasks",
        input={
            "tasks": [
                {"id": "a", "content": "find flights", "status": "completed"},
                {"id": "b", "content": "book hotel", "status": "in_progress"},
            ]
        },
    )
    inbox_call = ToolCall(
        id="c2",
        name="glove_post_to_inbox",
        input={"tag": "approval", "request": "manager approves budget", "blocking": True},
    )
    first_model = ScriptedModel([[tasks_call, inbox_call], "Waiting for approval.", "SUMMARY-1"])
    async with SqliteStore(path, "trip") as store:
        first = Glove(model=first_model, system_prompt="travel", store=store).build()
        await first.process_request("plan my trip")
        history = await store.get_messages()
        config = CompactionConfig(keep_last=2)
        [summary] = await compact(first, config, history)
        before = await store.get_messages()
        tasks = await store.get_tasks()
        inbox = await store.get_inbox_items()

    assert tasks == [
        Task(id="a", content="find flights", status="completed"),
        Task(id="b", content="book hotel", status="in_progress"),
    ]
    second_model = ScriptedModel(["Still waiting."])
    async with SqliteStore(path, "trip") as store:
        assert await store.get_messages() == before
        assert await store.get_tasks() == tasks
        assert await store.get_inbox_items() == inbox
        second = Glove(model=second_model, system_prompt="travel", store=store).build()
        await second.process_request("any news?")

    sent: ModelRequest = second_model.requests[0]
    # The model sees history from the summary on; the store still holds everything before it.
    assert sent.messages[0] == summary
    assert sent.messages[0].is_compaction
    assert "SUMMARY-1" in summary.text
    assert "[in_progress] b: book hotel" in summary.text
    assert "manager approves budget" in summary.text
    assert not any(m.tool_calls for m in sent.messages)
    assert len(before) > len(sent.messages)


async def test_a_permission_answer_survives_a_restart(tmp_path: Path) -> None:
    path = str(tmp_path / "perm.db")
    runs: list[str] = []

    async def do(input: Any, ctx: ToolContext) -> str:
        runs.append(input["path"])
        return "deleted"

    def delete_tool() -> Tool:
        return Tool(
            name="delete",
            description="Delete a file.",
            do=do,
            json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
            requires_permission=True,
        )

    asked: list[Slot] = []
    async with SqliteStore(path, "s") as store:
        model = ScriptedModel([[ToolCall(id="c1", name="delete", input={"path": "/a"})], "ok"])
        first = Glove(model=model, system_prompt="s", store=store).fold(delete_tool()).build()

        def grant(slots: list[Slot]) -> None:
            for slot in slots:
                if slot.renderer == "permission_request" and slot not in asked:
                    asked.append(slot)
                    first.display_manager.resolve(slot.id, True)

        first.display_manager.subscribe(grant)
        await first.process_request("delete /a")

    async with SqliteStore(path, "s") as store:
        model = ScriptedModel([[ToolCall(id="c2", name="delete", input={"path": "/a"})], "ok"])
        second = Glove(model=model, system_prompt="s", store=store).fold(delete_tool()).build()
        # Nobody answers on the second Glove: only the remembered grant lets the tool run.
        await asyncio.wait_for(second.process_request("again"), CHILD_TIMEOUT)
    assert runs == ["/a", "/a"]
    assert len(asked) == 1
