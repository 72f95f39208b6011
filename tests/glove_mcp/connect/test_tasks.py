"""Task-augmented tool calls (``glove_mcp.connect.tasks``) against two servers nobody here
tuned for it.

- The reference TypeScript server ``@modelcontextprotocol/server-everything``: its tool
  ``simulate-research-query`` requires tasks, runs four one-second stages, and with
  ``ambiguous=true`` (for clients that declare elicitation) goes ``input_required`` and asks for
  a clarification through ``tasks/result``. Skipped when not installed, unless
  ``GLOVE_REQUIRE_INTEROP=1`` (install with ``tests/interop/install.sh``).
- A task server written with the SDK's low-level ``Server``, for what the reference server
  cannot show: a task that never finishes, one that fails, one the server cancels. The SDK
  server does not speak tasks: ``tasks/*`` handlers are added with ``add_request_handler``,
  and a ``CreateTaskResult`` for ``tools/call`` has to come from a middleware, because the
  server's result check for ``tools/call`` rejects anything but a ``CallToolResult``.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as sdk
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams

from glove_mcp.connect.tasks import (
    TaskPolicy,
    TaskStatusInfo,
    call_tool_as_task,
    wants_task,
)
from glove_mcp.errors import McpTaskCancelledError, McpTaskTimeoutError

INTEROP = Path(__file__).resolve().parents[2] / "interop"
NODE = INTEROP / "node_modules" / "node" / "bin" / "node"
EVERYTHING = INTEROP / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
RESEARCH = "simulate-research-query"
WAIT = 60.0
"""Seconds any one wait in these tests may take: a bound against hangs, not a timing assert."""


class StatusLog:
    """An ``on_status`` callback that records every status and can be waited on."""

    def __init__(self) -> None:
        self.seen: list[TaskStatusInfo] = []
        self._changed = asyncio.Condition()

    async def __call__(self, info: TaskStatusInfo) -> None:
        async with self._changed:
            self.seen.append(info)
            self._changed.notify_all()

    @property
    def statuses(self) -> list[str]:
        return [info.status for info in self.seen]

    async def wait_for(self, status: str) -> TaskStatusInfo:
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: status in self.statuses), timeout=WAIT
            )
        return next(info for info in self.seen if info.status == status)


async def task_status(session: ClientSession, task_id: str) -> sdk.GetTaskResult:
    request = sdk.GetTaskRequest(params=sdk.GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, sdk.GetTaskResult)


# -- the pure helper ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("support", "policy", "expected"),
    [
        ("required", "never", True),
        ("required", "optional", True),
        ("required", "always", True),
        ("optional", "never", False),
        ("optional", "optional", True),
        ("optional", "always", True),
        ("forbidden", "always", False),
        (None, "always", False),
        (None, "never", False),
    ],
)
def test_wants_task(support: str | None, policy: TaskPolicy, expected: bool) -> None:
    assert wants_task(support, policy) is expected


# -- server-everything ----------------------------------------------------------------------------


@dataclass
class Elicitations:
    """The session's elicitation callback: answers every request with one interpretation."""

    answer: str = "programming"
    requests: list[sdk.ElicitRequestParams] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: sdk.ElicitRequestParams
    ) -> sdk.ElicitResult:
        self.requests.append(params)
        return sdk.ElicitResult(action="accept", content={"interpretation": self.answer})


@asynccontextmanager
async def everything(elicitations: Elicitations) -> AsyncIterator[ClientSession]:
    missing = [str(p.relative_to(INTEROP)) for p in (NODE, EVERYTHING) if not p.is_file()]
    if missing:
        why = (
            f"server-everything is not installed (missing {missing}): run tests/interop/install.sh"
        )
        if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
            pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {why}", pytrace=False)
        pytest.skip(why)
    params = StdioServerParameters(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitations) as session,
    ):
        await session.initialize()
        await session.list_tools()
        yield session


async def test_everything_lists_the_research_tool_as_task_required() -> None:
    async with everything(Elicitations()) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        tool = tools[RESEARCH]
        assert tool.execution is not None and tool.execution.task_support == "required"
        assert set(tool.input_schema["properties"]) == {"topic", "ambiguous"}
        capabilities = session.server_capabilities
        assert capabilities is not None and capabilities.tasks is not None
        assert capabilities.tasks.cancel is not None


async def test_everything_research_task_completes() -> None:
    log = StatusLog()
    elicitations = Elicitations()
    async with everything(elicitations) as session:
        result = await call_tool_as_task(
            session, RESEARCH, {"topic": "glove"}, ttl_ms=60_000, max_wait=WAIT, on_status=log
        )
    assert not result.is_error
    [block] = result.content
    assert isinstance(block, sdk.TextContent) and "# Research Report: glove" in block.text
    assert log.statuses[0] == "working" and log.statuses[-1] == "completed"
    assert "input_required" not in log.statuses
    assert len({info.task_id for info in log.seen}) == 1
    assert elicitations.requests == []


async def test_everything_ambiguous_query_is_clarified_through_elicitation() -> None:
    log = StatusLog()
    elicitations = Elicitations(answer="snake")
    async with everything(elicitations) as session:
        result = await call_tool_as_task(
            session, RESEARCH, {"topic": "python", "ambiguous": True}, max_wait=WAIT, on_status=log
        )
    [block] = result.content
    assert isinstance(block, sdk.TextContent) and "**Clarification**: snake" in block.text
    assert "input_required" in log.statuses and log.statuses[-1] == "completed"
    [request] = elicitations.requests
    # The server ties its request to the task (2025-11-25 "related-task" metadata).
    assert request.meta is not None
    meta: dict[str, Any] = dict(request.meta)
    related = meta["io.modelcontextprotocol/related-task"]
    assert related == {"taskId": log.seen[0].task_id}


async def test_everything_aborted_call_cancels_the_task() -> None:
    log = StatusLog()
    async with everything(Elicitations()) as session:
        call = asyncio.create_task(
            call_tool_as_task(session, RESEARCH, {"topic": "abort"}, max_wait=WAIT, on_status=log)
        )
        working = await log.wait_for("working")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        after = await task_status(session, working.task_id)
    assert after.status == "cancelled"


async def test_everything_max_wait_cancels_the_task_and_raises() -> None:
    async with everything(Elicitations()) as session:
        with pytest.raises(McpTaskTimeoutError, match="still 'working' after max_wait") as caught:
            await call_tool_as_task(session, RESEARCH, {"topic": "slow"}, max_wait=0.2)
        assert isinstance(caught.value, TimeoutError)
        after = await task_status(session, caught.value.task_id)
    assert after.status == "cancelled"


async def test_a_task_that_runs_out_of_call_timeout_leaves_the_connection_open() -> None:
    from glove_mcp import connect_mcp
    from glove_mcp.connect import ConnectionState
    from glove_mcp.errors import McpTimeoutError

    async with everything(Elicitations()):
        pass  # skips (or fails under GLOVE_REQUIRE_INTEROP) when server-everything is missing
    command = [str(NODE), str(EVERYTHING), "stdio"]
    async with await connect_mcp("everything", "", command=command, call_timeout=0.3) as conn:
        await conn.list_tools()  # learns that the research tool runs only as a task
        with pytest.raises(McpTimeoutError, match=r"within 0\.3 s"):
            await conn.call_tool(RESEARCH, {"topic": "slow"})
        # The task cancelled itself on the server; the session was not the one that hung.
        assert conn.state is ConnectionState.CONNECTED
        echoed = await conn.call_tool("echo", {"message": "still here"})
        assert "still here" in echoed.text


# -- a task server written with the SDK -----------------------------------------------------------

Behaviour = Literal["never", "stuck_input", "fails", "fails_rpc", "server_cancels", "plain"]
NOW = "2025-11-25T00:00:00Z"


@dataclass
class FakeTask:
    behaviour: Behaviour
    status: sdk.TaskStatus = "working"
    message: str | None = None
    done: anyio.Event = field(default_factory=anyio.Event)

    def model(self, task_id: str) -> sdk.Task:
        return sdk.Task(
            task_id=task_id,
            status=self.status,
            status_message=self.message,
            created_at=NOW,
            last_updated_at=NOW,
            ttl=60_000,
            poll_interval=1,  # below the client's floor: the clamp must apply
        )


@dataclass
class TaskServer:
    """Tools named after their behaviour; every task request and cancel is recorded."""

    tasks: dict[str, FakeTask] = field(default_factory=dict)
    cancelled: list[str] = field(default_factory=list)
    gets: int = 0
    ids: Callable[[], int] = field(default_factory=lambda: itertools.count(1).__next__)

    def build(self) -> Server[Any]:
        server: Server[Any] = Server(
            "tasks", on_list_tools=self.list_tools, on_call_tool=self.call_tool
        )
        server.add_request_handler("tasks/get", sdk.GetTaskRequestParams, self.get)
        server.add_request_handler("tasks/result", sdk.GetTaskPayloadRequestParams, self.result)
        server.add_request_handler("tasks/cancel", sdk.CancelTaskRequestParams, self.cancel)
        server.middleware.append(self.create_task)
        return server

    async def list_tools(self, ctx: Any, params: Any) -> sdk.ListToolsResult:
        execution = sdk.ToolExecution(task_support="optional")
        names = ["never", "stuck_input", "fails", "fails_rpc", "server_cancels", "plain"]
        schema = {"type": "object"}
        return sdk.ListToolsResult(
            tools=[sdk.Tool(name=n, input_schema=schema, execution=execution) for n in names]
        )

    async def call_tool(self, ctx: Any, params: sdk.CallToolRequestParams) -> sdk.CallToolResult:
        # Reached only by "plain", which ignores the task request, as a server may.
        return sdk.CallToolResult(content=[sdk.TextContent(text="done at once")])

    async def create_task(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params or {}
        if ctx.method != "tools/call" or "task" not in params or params["name"] == "plain":
            return await call_next(ctx)
        task_id = f"task-{self.ids()}"
        task = self.tasks[task_id] = FakeTask(params["name"])
        if task.behaviour == "stuck_input":
            task.status, task.message = "input_required", "waiting for an answer never asked"
        return sdk.CreateTaskResult(task=task.model(task_id)).model_dump(
            by_alias=True, mode="json", exclude_none=True
        )

    async def get(self, ctx: Any, params: sdk.GetTaskRequestParams) -> sdk.GetTaskResult:
        self.gets += 1
        task = self.tasks[params.task_id]
        if task.behaviour in ("fails", "fails_rpc") and task.status == "working":
            task.status, task.message = "failed", "disk full"
            task.done.set()
        if task.behaviour == "server_cancels" and task.status == "working":
            task.status, task.message = "cancelled", "operator stopped it"
        return sdk.GetTaskResult.model_validate(task.model(params.task_id).model_dump())

    async def result(self, ctx: Any, params: sdk.GetTaskPayloadRequestParams) -> sdk.CallToolResult:
        task = self.tasks[params.task_id]
        await task.done.wait()  # the spec: block until the task is terminal
        if task.behaviour == "fails_rpc":
            raise MCPError(code=-32603, message="backend exploded")
        return sdk.CallToolResult(content=[sdk.TextContent(text="no space left")], is_error=True)

    async def cancel(self, ctx: Any, params: sdk.CancelTaskRequestParams) -> sdk.CancelTaskResult:
        self.cancelled.append(params.task_id)
        task = self.tasks[params.task_id]
        task.status, task.message = "cancelled", "cancelled by the client"
        task.done.set()
        return sdk.CancelTaskResult.model_validate(task.model(params.task_id).model_dump())


@asynccontextmanager
async def task_server() -> AsyncIterator[tuple[TaskServer, ClientSession]]:
    fake = TaskServer()
    server = fake.build()
    options = server.create_initialization_options()
    async with (
        create_client_server_memory_streams() as (client, served),
        anyio.create_task_group() as group,
    ):
        group.start_soon(server.run, served[0], served[1], options)
        async with ClientSession(client[0], client[1]) as session:
            await session.initialize()
            yield fake, session
        group.cancel_scope.cancel()


async def test_a_task_that_never_finishes_is_cancelled_after_max_wait() -> None:
    log = StatusLog()
    async with task_server() as (fake, session):
        with pytest.raises(McpTaskTimeoutError, match="tool 'never': task task-1") as caught:
            await call_tool_as_task(session, "never", {}, max_wait=0.3, on_status=log)
    assert fake.cancelled == ["task-1"]
    assert caught.value.status == "working"
    assert log.statuses == ["working"]  # reported once, not once per poll


async def test_the_poll_cap_bounds_a_call_without_max_wait() -> None:
    async with task_server() as (fake, session):
        with pytest.raises(McpTaskTimeoutError, match="after 3 polls"):
            await call_tool_as_task(session, "never", None, max_wait=None, max_polls=3)
    assert fake.gets == 3
    assert fake.cancelled == ["task-1"]


async def test_the_poll_cap_also_ends_a_tasks_result_that_never_returns() -> None:
    log = StatusLog()
    async with task_server() as (fake, session):
        with pytest.raises(McpTaskTimeoutError, match="still 'input_required' after 2 polls"):
            await call_tool_as_task(
                session, "stuck_input", {}, max_wait=None, max_polls=2, on_status=log
            )
    assert fake.cancelled == ["task-1"]
    assert log.statuses == ["input_required"]


async def test_a_failed_task_returns_the_servers_error_result() -> None:
    log = StatusLog()
    async with task_server() as (fake, session):
        result = await call_tool_as_task(session, "fails", {}, max_wait=WAIT, on_status=log)
    assert result.is_error
    assert result.content == [sdk.TextContent(text="no space left")]
    assert log.statuses == ["working", "failed"]
    assert fake.cancelled == []


async def test_a_failed_task_without_a_result_says_why() -> None:
    async with task_server() as (fake, session):
        result = await call_tool_as_task(session, "fails_rpc", {}, max_wait=WAIT)
    assert result.is_error
    assert result.content == [
        sdk.TextContent(text="The task task-1 running tool 'fails_rpc' failed: disk full")
    ]
    assert fake.cancelled == []


async def test_a_task_cancelled_by_the_server_raises() -> None:
    async with task_server() as (fake, session):
        with pytest.raises(McpTaskCancelledError, match=r"\(operator stopped it\); call the tool"):
            await call_tool_as_task(session, "server_cancels", {}, max_wait=WAIT)
    assert fake.cancelled == []  # nothing to cancel: it already was


async def test_a_server_that_ignores_the_task_request_answers_plainly() -> None:
    log = StatusLog()
    async with task_server() as (fake, session):
        result = await call_tool_as_task(session, "plain", {}, max_wait=WAIT, on_status=log)
    assert result.content == [sdk.TextContent(text="done at once")]
    assert log.seen == [] and fake.tasks == {}


async def test_cancelling_the_caller_cancels_the_task_and_propagates() -> None:
    log = StatusLog()
    async with task_server() as (fake, session):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: call_tool_as_task(session, "never", {}, max_wait=None, on_status=log)
                )
                await log.wait_for("working")
                scope.cancel()
        assert scope.cancelled_caught
        after = await task_status(session, "task-1")
    assert fake.cancelled == ["task-1"]
    assert after.status == "cancelled"
