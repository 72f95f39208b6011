"""Pushed task statuses of the 2026-07-28 tasks extension (``glove_mcp.connect.task_stream``):
while a task runs, the client asks for its statuses on a ``subscriptions/listen`` stream naming
it, hands each pushed one to the same path as a polled one (reported once), closes the stream
when the task ends, is cancelled or times out, and polls as before when the server does not
serve the stream or does not honour task ids.

The server is ``task_push_server.PushServer`` (the mcp SDK's low-level server, over Streamable
HTTP on 127.0.0.1): FastMCP's tasks extension serves no ``subscriptions/listen``
(tests/interop/test_fastmcp_tasks_caching.py covers it, by polling). Its tasks move only when
the test says, so what reached the client by push, and what by poll, is known exactly.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.streamable_http import streamable_http_client

from glove_core import Glove, ScriptedModel, ToolCall
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, connect_mcp, mount_mcp
from glove_mcp.connect.task_stream import MAX_UNHONOURED, TaskStreams
from glove_mcp.connect.tasks import TaskStatusInfo
from glove_mcp.connect.tasks_extension import CreatedTask, drive_task, extension_kwargs
from glove_mcp.errors import McpTaskTimeoutError, McpTimeoutError
from glove_mcp.subscribers import McpProgress
from glove_mcp.testing import serve
from glove_mcp.types import McpTextContent
from tests.glove_mcp.connect.task_push_server import PushedTaskState, PushServer, text

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

WAIT = 30.0
"""Seconds any one wait may take: a bound against hangs, not a timing assert."""
PACE = 0.15
"""Seconds between two status changes the test makes: a connection passes on at most one
progress report per 0.1 s (``ProgressGate``), so faster changes would be thinned."""


async def until(condition: Callable[[], bool]) -> None:
    """Wait until ``condition()`` holds (bounded by ``WAIT``)."""
    with anyio.fail_after(WAIT):
        while True:
            if condition():
                return
            await anyio.sleep(0.01)


async def test_pushed_statuses_reach_the_agent_before_the_task_ends() -> None:
    probe = PushServer()  # suggests polling every 5 s: pushes are what moves the call
    model = ScriptedModel([[ToolCall(id="c0", name="push__job", input={})], "done"])
    glove = Glove(model, "test", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    polled_when_seen: dict[str, int] = {}
    async with serve(probe.build()) as url:
        entry = McpCatalogueEntry(id="push", name="Push", description="pushes", url=url)
        async with await mount_mcp(glove, MemoryMcpAdapter("c", active=["push"]), [entry]):
            glove.build()
            turn = asyncio.create_task(glove.process_request("go"))
            task = await probe.created()
            await asyncio.wait_for(probe.listening(task.task_id).wait(), WAIT)
            steps = [("working", "step 1"), ("working", "step 2"), ("completed", None)]
            for count, (status, message) in enumerate(steps, start=1):
                # Each status is made only once the agent saw the one before, while the task
                # was still running; tasks/get had not served it when it arrived.
                [*_, seen] = await recorder.wait_for(McpProgress, count, within=WAIT)
                polled_when_seen[seen.message or ""] = probe.polled[task.label()]
                await asyncio.sleep(PACE)
                result = {"content": [text("all done")]} if status == "completed" else None
                probe.advance(task, status, message, result)
            await asyncio.wait_for(turn, WAIT)
            progress = recorder.of(McpProgress)
            polled_when_seen[progress[-1].message or ""] = probe.polled[task.label()]
        assert probe.open_streams == 0 and probe.closed_streams == 1
    assert [p.message for p in progress] == [
        "task working: queued",
        "task working: step 1",
        "task working: step 2",
        "task completed",
    ]
    assert {(p.server, p.tool, p.call_id) for p in progress} == {("push", "job", "c0")}
    assert polled_when_seen == dict.fromkeys(polled_when_seen, 0), polled_when_seen
    [reply] = [r for m in model.requests[-1].messages for r in (m.tool_results or [])]
    assert reply.result.status == "success" and "all done" in str(reply.result.data)


async def elicit_name(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@asynccontextmanager
async def bound_session(url: str, streams: TaskStreams) -> AsyncIterator[ClientSession]:
    """An SDK session wired to ``streams`` as a connection wires its own: the binding for
    pushed statuses, and stream acknowledgements from the message handler. It answers
    elicitation with a name."""

    async def message_handler(message: Any) -> None:
        if isinstance(message, types.SubscriptionsAcknowledgedNotification):
            streams.acknowledged(message)

    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(streamable_http_client(url))
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                message_handler=message_handler,
                elicitation_callback=elicit_name,
                **extension_kwargs(streams),
            )
        )
        await session.discover()
        yield session


@asynccontextmanager
async def followed_task(
    probe: PushServer, on_status: Callable[[TaskStatusInfo], Awaitable[None]]
) -> AsyncIterator[tuple[PushedTaskState, asyncio.Task[types.CallToolResult]]]:
    """Serve ``probe``, call its tool and follow the task with ``drive_task`` in the
    background, once the server streams its statuses; yields the task and the follower."""
    streams = TaskStreams()
    async with serve(probe.build()) as url, bound_session(url, streams) as session:
        created = await session.call_tool("job", allow_claimed=True)
        assert isinstance(created, CreatedTask)
        follower = asyncio.create_task(
            drive_task(session, "job", created, max_wait=WAIT, on_status=on_status, streams=streams)
        )
        task = probe.task()
        await asyncio.wait_for(probe.listening(task.task_id).wait(), WAIT)
        try:
            yield task, follower
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)


async def test_input_a_pushed_status_asks_for_is_answered() -> None:
    probe = PushServer()  # suggests polling every 5 s
    statuses: list[TaskStatusInfo] = []

    async def on_status(info: TaskStatusInfo) -> None:
        statuses.append(info)

    ask = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
    async with followed_task(probe, on_status) as (task, follower):
        probe.advance(task, "input_required", "needs a name", input_requests={"who": ask})
        await until(lambda: len(probe.updates) == 1)
        probe.advance(task, "completed", None, {"content": [text("hello Ada")]})
        result = await asyncio.wait_for(follower, WAIT)
    assert probe.updates == [{"who": {"action": "accept", "content": {"name": "Ada"}}}]
    assert result.content == [types.TextContent(text="hello Ada")]
    assert [s.status for s in statuses] == ["working", "input_required", "completed"]
    assert probe.gets == 0  # all of it came pushed


async def test_a_status_older_than_one_seen_is_skipped() -> None:
    probe = PushServer()
    statuses: list[str | None] = []

    async def on_status(info: TaskStatusInfo) -> None:
        statuses.append(info.status_message)

    async with followed_task(probe, on_status) as (task, follower):
        probe.advance(task, "working", "step 1")
        step_1 = task.wire(probe.poll_interval_ms)
        await until(lambda: "step 1" in statuses)
        probe.advance(task, "working", "step 2")
        await until(lambda: "step 2" in statuses)
        probe.push_raw(task, step_1)  # delivered again, late
        probe.advance(task, "completed", "done", {"content": [text("ok")]})
        await asyncio.wait_for(follower, WAIT)
    assert statuses == ["queued", "step 1", "step 2", "done"]


async def test_a_status_both_polled_and_pushed_is_reported_once() -> None:
    # The server acknowledges the stream only after the client polled the first status, then
    # pushes that status twice more, and completes only once it pushed on a stream.
    probe = PushServer(ack_after_gets=1, repeat=2, complete_when_pushed=True, poll_interval_ms=50)
    statuses: list[TaskStatusInfo] = []

    async def on_status(info: TaskStatusInfo) -> None:
        statuses.append(info)

    streams = TaskStreams()
    async with serve(probe.build()) as url, bound_session(url, streams) as session:
        created = await session.call_tool("job", allow_claimed=True)
        assert isinstance(created, CreatedTask)
        result = await drive_task(
            session, "job", created, max_wait=WAIT, on_status=on_status, streams=streams
        )
        await until(lambda: probe.closed_streams == 1)
    assert result.content == [types.TextContent(text="done")]
    assert [(s.status, s.status_message) for s in statuses] == [
        ("working", "queued"),
        ("completed", None),
    ]
    assert probe.polled["working: queued"] >= 1  # the same status came both ways
    assert streams.following == 0 and not streams.refused


@pytest.mark.parametrize("serve_listen", [True, False], ids=["ignores-task-ids", "no-listen"])
async def test_a_server_that_pushes_nothing_is_polled_and_soon_not_asked(
    serve_listen: bool,
) -> None:
    # One acknowledges the stream without the task id (as the SDK's own listen handler does):
    # asked MAX_UNHONOURED times. The other does not serve subscriptions/listen: asked once.
    probe = PushServer(serve_listen=serve_listen, honour=False, poll_interval_ms=50)
    asked = MAX_UNHONOURED if serve_listen else 1
    async with serve(probe.build()) as url, await connect_mcp("p", url) as conn:
        for number in range(1, asked + 2):
            call = asyncio.create_task(conn.call_tool("job", {}))
            task = await probe.created(number)
            # The stream is closed while the task still runs (none is opened after `asked`).
            streams = min(number, asked)

            def settled(streams: int = streams) -> bool:
                closed = streams if serve_listen else 0
                return (
                    probe.listens == streams
                    and probe.open_streams == 0
                    and probe.closed_streams == closed
                )

            await until(settled)
            probe.advance(task, "completed", None, {"content": [text(f"done {number}")]})
            result = await asyncio.wait_for(call, WAIT)
            assert [c.text for c in result.content if isinstance(c, McpTextContent)] == [
                f"done {number}"
            ]
    assert probe.listens == asked
    assert probe.polled["completed"] == asked + 1  # what ended every call was polled


async def test_cancelling_the_call_closes_the_task_stream() -> None:
    probe = PushServer()
    async with serve(probe.build()) as url, await connect_mcp("p", url) as conn:
        call = asyncio.create_task(conn.call_tool("job", {}))
        task = await probe.created()
        await asyncio.wait_for(probe.listening(task.task_id).wait(), WAIT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await until(lambda: probe.open_streams == 0)
        assert probe.cancelled == [task.task_id]
        assert probe.closed_streams == 1
        # The connection goes on: the next task gets a stream of its own.
        again = asyncio.create_task(conn.call_tool("job", {}))
        second = await probe.created(2)
        await asyncio.wait_for(probe.listening(second.task_id).wait(), WAIT)
        probe.advance(second, "completed", None, {"content": [text("fine")]})
        assert not (await asyncio.wait_for(again, WAIT)).is_error
    assert probe.listens == 2 and probe.open_streams == 0


async def test_a_call_past_its_deadline_closes_the_task_stream() -> None:
    probe = PushServer()
    async with serve(probe.build()) as url, await connect_mcp("p", url, call_timeout=1.0) as conn:
        with pytest.raises((McpTimeoutError, McpTaskTimeoutError)):
            await conn.call_tool("job", {})
        await until(lambda: probe.open_streams == 0)
    assert probe.listens == 1 and probe.closed_streams == 1
    assert probe.cancelled == ["task-1"]
