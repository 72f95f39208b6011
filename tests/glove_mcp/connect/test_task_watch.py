"""What a 2025-11-25 task reports outside its polls (``TaskWatch``): progress the server sends
after ``CreateTaskResult`` and pushed ``notifications/tasks/status`` reach the caller, through
the message handler a connection gives its sessions. The server is the SDK's low-level
``Server`` with ``tasks/*`` handlers of its own (the SDK server does not speak tasks), over
in-memory streams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import mcp_types as sdk
from mcp.client.session import ClientSession
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.memory import create_client_server_memory_streams

from glove_mcp.connect.mcp_server_requests import ServerRequests
from glove_mcp.connect.tasks import TaskStatusInfo, TaskWatch, call_tool_as_task

NOW = "2026-12-02T00:00:00Z"
WAIT = 60.0
"""Seconds any one wait may take: a bound against hangs, not a timing assert."""


class ReportingTasks:
    """One tool, ``report``: a task that, once created, sends three progress reports for the
    call's token and a status notification, then completes when the client asks for the
    result."""

    def __init__(self) -> None:
        self.status: sdk.TaskStatus = "working"
        self.reported = anyio.Event()
        self.tokens: list[Any] = []

    def task(self) -> sdk.Task:
        return sdk.Task(
            task_id="task-1",
            status=self.status,
            status_message="indexing" if self.status == "working" else "all done",
            created_at=NOW,
            last_updated_at=NOW,
            ttl=60_000,
            poll_interval=50,
        )

    def build(self) -> Server[Any]:
        server: Server[Any] = Server("reporting", on_list_tools=self.list_tools)
        server.add_request_handler("tasks/get", sdk.GetTaskRequestParams, self.get)
        server.add_request_handler("tasks/result", sdk.GetTaskPayloadRequestParams, self.result)
        server.add_request_handler("tasks/cancel", sdk.CancelTaskRequestParams, self.cancel)
        server.middleware.append(self.create)
        return server

    async def list_tools(self, ctx: Any, params: Any) -> sdk.ListToolsResult:
        tool = sdk.Tool(
            name="report",
            input_schema={"type": "object"},
            execution=sdk.ToolExecution(task_support="required"),
        )
        return sdk.ListToolsResult(tools=[tool])

    async def create(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        token = ((ctx.params or {}).get("_meta") or {}).get("progressToken")
        self.tokens.append(token)
        session = ctx.session

        async def later() -> None:
            await asyncio.sleep(0.05)  # after the CreateTaskResult went out
            for step in (1, 2, 3):
                if token is not None:
                    await session.send_progress_notification(token, step, 3, f"step {step}")
            self.status = "completed"
            pushed = sdk.TaskStatusNotification(
                params=sdk.TaskStatusNotificationParams(**self.task().model_dump())
            )
            # The SDK's server types no task notifications; the wire shape is the spec's.
            await session.send_notification(cast(Any, pushed))
            self.reported.set()

        asyncio.get_running_loop().create_task(later())
        return sdk.CreateTaskResult(task=self.task()).model_dump(
            by_alias=True, mode="json", exclude_none=True
        )

    async def get(self, ctx: Any, params: sdk.GetTaskRequestParams) -> sdk.GetTaskResult:
        return sdk.GetTaskResult.model_validate(self.task().model_dump())

    async def result(self, ctx: Any, params: Any) -> sdk.CallToolResult:
        await self.reported.wait()
        return sdk.CallToolResult(content=[sdk.TextContent(text="indexed")])

    async def cancel(self, ctx: Any, params: sdk.CancelTaskRequestParams) -> sdk.CancelTaskResult:
        return sdk.CancelTaskResult.model_validate(self.task().model_dump())


@asynccontextmanager
async def reporting(watch: TaskWatch | None) -> AsyncIterator[tuple[ReportingTasks, ClientSession]]:
    fake = ReportingTasks()
    server = fake.build()
    spawned: set[asyncio.Task[None]] = set()

    def spawn(work: Any) -> None:
        task = asyncio.ensure_future(work)
        spawned.add(task)
        task.add_done_callback(spawned.discard)

    handlers = ServerRequests().callbacks("reporting", spawn, watch)
    async with (
        create_client_server_memory_streams() as (client, served),
        anyio.create_task_group() as group,
    ):
        group.start_soon(server.run, served[0], served[1], server.create_initialization_options())
        async with ClientSession(
            client[0], client[1], message_handler=handlers["message_handler"]
        ) as session:
            await session.initialize()
            yield fake, session
        group.cancel_scope.cancel()


async def test_progress_after_the_task_started_and_pushed_statuses_reach_the_caller() -> None:
    reports: list[tuple[float, float | None, str | None]] = []
    statuses: list[TaskStatusInfo] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async def on_status(info: TaskStatusInfo) -> None:
        statuses.append(info)

    watch = TaskWatch()
    async with reporting(watch) as (fake, session):
        result = await asyncio.wait_for(
            call_tool_as_task(
                session,
                "report",
                {},
                max_wait=WAIT,
                on_status=on_status,
                progress_callback=on_progress,
                watch=watch,
            ),
            WAIT,
        )
        await asyncio.sleep(0)  # let the last handed-over notification run
    assert result.content == [sdk.TextContent(text="indexed")]
    assert fake.tokens and str(fake.tokens[0]).startswith("glove-task-")
    assert [r[2] for r in reports] == ["step 1", "step 2", "step 3"]
    assert statuses and statuses[0].status == "working"
    assert "completed" in [s.status for s in statuses]


async def test_without_a_watch_later_progress_is_lost_as_before() -> None:
    reports: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(message)

    async with reporting(None) as (_, session):
        await call_tool_as_task(session, "report", {}, max_wait=WAIT, progress_callback=on_progress)
    assert reports == []


def test_a_watch_hands_nothing_it_does_not_watch() -> None:
    watch = TaskWatch()
    note = sdk.ProgressNotification(
        params=sdk.ProgressNotificationParams(progress_token="other", progress=1)
    )
    assert asyncio.run(watch.deliver(note)) is False
    assert watch.new_token() != watch.new_token()
