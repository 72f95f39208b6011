"""The tasks extension of revision 2026-07-28 (SEP-2663, ``io.modelcontextprotocol/tasks``).

In 2026-07-28 tasks left the core protocol. The client declares the extension in every
request's capabilities; the *server* decides, call by call, whether to answer ``tools/call``
with a task handle (``resultType: "task"``) instead of the result — the client does not ask.
Then::

    tools/call ──> {resultType: "task", taskId, status, pollIntervalMs, ttlMs}
    tasks/get  (every pollIntervalMs, clamped) ──> the task, with inline
                 result (completed) | error (failed) | inputRequests (input_required)
    tasks/update {taskId, inputResponses}      ──> {}   (answers to inputRequests)
    tasks/cancel {taskId}                       ──> {}   (on abort or timeout)

``tasks/result`` is gone. Servers on 2025-11-25 keep the older design
(``glove_mcp.connect.tasks``): there the client asks for a task with ``params.task``.

While the task runs, the client also asks the server to push its statuses
(``subscriptions/listen`` with the task's id, ``glove_mcp.connect.task_stream``); a server
that does push them saves the polls (they slow to a backstop) and the wait, one that does not
is polled as above. A pushed status is read exactly as a polled one.

Every status the task reports that differs from the last, polled or pushed, goes to
``on_status`` once (the connection turns them into progress events, so they reach the agent);
a status older than one already seen (``lastUpdatedAt``) is skipped. Input requests are
answered with the session's own elicitation, sampling and roots handlers, each key once.
Outcomes: ``completed`` → the ``CallToolResult`` (validated like a plain call's); ``failed`` → a
``CallToolResult`` with ``is_error=True`` naming the server's error; ``cancelled`` →
``McpTaskCancelledError``; ``max_wait`` or the poll cap → ``tasks/cancel``, then
``McpTaskTimeoutError``; the caller cancelled → ``tasks/cancel`` (shielded, bounded), then the
cancellation goes on.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClaimContext, ResultClaim
from mcp.client.session import ClientSession
from pydantic import Field, TypeAdapter, ValidationError

from glove_mcp.connect.mcp_server_requests import answer_input_requests
from glove_mcp.connect.task_stream import (
    STREAMED_POLL_INTERVAL,
    TaskPushes,
    TaskStreams,
    follow_pushes,
)
from glove_mcp.connect.tasks import (
    CANCEL_GRACE,
    DEFAULT_MAX_POLLS,
    TaskStatusInfo,
    poll_interval,
)
from glove_mcp.errors import McpTaskCancelledError, McpTaskTimeoutError

__all__ = [
    "TASKS_EXTENSION",
    "CreatedTask",
    "DetailedTask",
    "drive_task",
    "extension_kwargs",
]

logger = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier, declared in every request's client capabilities."""

_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)

TaskState = Literal["working", "input_required", "completed", "failed", "cancelled"]


class CreatedTask(types.Result):
    """A server's answer to ``tools/call`` that is a task handle (``resultType: "task"``).

    Attributes:
        task_id: the server's handle.
        status: the task's first status.
        status_message: the server's note on it.
        ttl_ms: how long the server keeps the task (None: no limit).
        poll_interval_ms: the server's suggested wait between two ``tasks/get``.
    """

    result_type: Literal["task"] = "task"
    task_id: str
    status: TaskState
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    """What ``tasks/get`` answers (and ``notifications/tasks`` pushes): the task, with its
    result, error or input requests inline."""

    task_id: str
    status: TaskState
    status_message: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class _TaskIdParams(types.RequestParams):
    task_id: str


class _GetTask(types.Request[_TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams


class _CancelTask(types.Request[_TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams


class _UpdateParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams


async def _resolve_silently(created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    # Reached only by callers of the raw session that did not ask for the handle
    # (allow_claimed=False): they get the result, without status reports.
    return await drive_task(ctx.session, ctx.tool_name, created, max_wait=ctx.read_timeout_seconds)


def extension_kwargs(streams: TaskStreams | None = None) -> dict[str, Any]:
    """Keyword arguments for the SDK's ``ClientSession`` that declare the extension and let a
    ``tools/call`` answer with a task handle (a ``CreatedTask``, with ``allow_claimed=True``).
    The SDK declares it only on the 2026-07-28 protocol. With ``streams``, the task statuses
    a server pushes (``notifications/tasks``) are routed to them."""
    claim = ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve_silently)
    kwargs: dict[str, Any] = {
        "extensions": {TASKS_EXTENSION: {}},
        "result_claims": {TASKS_EXTENSION: [claim]},
    }
    if streams is not None:
        kwargs["notification_bindings"] = [streams.binding()]
    return kwargs


async def drive_task(
    session: ClientSession,
    tool: str,
    created: CreatedTask,
    *,
    max_wait: float | None,
    on_status: Callable[[TaskStatusInfo], Awaitable[None]] | None = None,
    max_polls: int = DEFAULT_MAX_POLLS,
    streams: TaskStreams | None = None,
) -> types.CallToolResult:
    """Follow a task the server created for a ``tools/call`` to its result.

    Args:
        session: the session the call was made on.
        tool: the tool's name on the server.
        created: the server's task handle.
        max_wait: seconds to wait for the outcome; None waits as long as the poll cap allows.
        on_status: awaited with each status that differs from the last (the first included).
        max_polls: ``tasks/get`` requests allowed before giving up.
        streams: the connection's pushed task statuses (bound to ``session`` by
            ``extension_kwargs``); the task's statuses are asked for on a stream of its own,
            closed when this returns or raises. None: polling only.

    Returns:
        The tool's result; for a ``failed`` task one with ``is_error=True`` that says why.

    Raises:
        McpTaskCancelledError: the server reports the task cancelled.
        McpTaskTimeoutError: ``max_wait`` elapsed or ``max_polls`` ran out (after
            ``tasks/cancel``).
        mcp.shared.exceptions.MCPError: a JSON-RPC error for ``tasks/*``, or an input request
            the client refused.
    """
    follower = _Follower(session, tool, created.task_id, on_status, max_polls)
    try:
        with anyio.move_on_after(math.inf if max_wait is None else max_wait):
            async with follow_pushes(streams, session, created.task_id) as follower.pushes:
                await follower.see(created.status, created.status_message, created.poll_interval_ms)
                return await follower.run()
        raise follower.timeout(f"max_wait={max_wait}s")
    except BaseException:
        await follower.cancel()
        raise


class _Follower:
    """One task followed to its end: polls (or reads what the server pushes), answers input,
    reports, cancels on the way out."""

    def __init__(
        self,
        session: ClientSession,
        tool: str,
        task_id: str,
        on_status: Callable[[TaskStatusInfo], Awaitable[None]] | None,
        max_polls: int,
    ) -> None:
        self.session = session
        self.tool = tool
        self.task_id = task_id
        self.on_status = on_status
        self.max_polls = max_polls
        self.polls = 0
        self.status: TaskState = "working"
        self.status_message: str | None = None
        self.interval = poll_interval(None)
        self.answered: set[str] = set()
        self.finished = False
        self.pushes = TaskPushes()
        self.updated_at: datetime | None = None
        self.reported = False

    async def see(self, status: TaskState, message: str | None, interval_ms: int | None) -> None:
        changed = not self.reported or (status, message) != (self.status, self.status_message)
        self.reported = True
        self.status, self.status_message = status, message
        self.interval = poll_interval(interval_ms)
        if changed and self.on_status is not None:
            await self.on_status(TaskStatusInfo(self.task_id, status, message))

    def timeout(self, limit: str) -> McpTaskTimeoutError:
        return McpTaskTimeoutError(
            tool=self.tool,
            task_id=self.task_id,
            status=self.status,
            status_message=self.status_message,
            limit=limit,
        )

    async def run(self) -> types.CallToolResult:
        while True:
            task = await self.next_task()
            if task is None or self.stale(task):
                continue
            await self.see(task.status, task.status_message, task.poll_interval_ms)
            if task.status == "input_required":
                await self.answer(task.input_requests or {})
            elif task.status in ("completed", "failed", "cancelled"):
                self.finished = True
                return await self.outcome(task)

    async def next_task(self) -> DetailedTask | None:
        """The next state of the task: the oldest one pushed, or, after a wait without one,
        a ``tasks/get``. None when the wait ended for the stream's end, or a pushed state
        was unreadable (the loop then waits again, at the pace that now applies)."""
        pushed = self.pushes.take()
        if pushed is None:
            wait = STREAMED_POLL_INTERVAL if self.pushes.flowing else self.interval
            if not await self.pushes.wait(wait):
                return await self.poll()
            pushed = self.pushes.take()
            if pushed is None:
                return None
        try:
            return DetailedTask.model_validate(pushed, by_name=False)
        except ValidationError as exc:
            logger.debug(
                "task %s: a pushed status that is not a task (%d problem(s)), ignored",
                self.task_id,
                exc.error_count(),
            )
            return None

    async def poll(self) -> DetailedTask:
        if self.polls >= self.max_polls:
            raise self.timeout(f"{self.max_polls} polls")
        self.polls += 1
        return await self.session.send_request(
            _GetTask(params=_TaskIdParams(task_id=self.task_id)), DetailedTask
        )

    def stale(self, task: DetailedTask) -> bool:
        """Whether ``task`` is older than a state already seen: a poll answered before a push
        that was read first, or the reverse. An end is never stale (it is final), nor is a
        state without a readable time."""
        try:
            at = datetime.fromisoformat(task.last_updated_at or "")
        except ValueError:
            return False
        if at.tzinfo is None:
            return False  # cannot be compared with an aware one; the spec's times have zones
        if self.updated_at is not None and at < self.updated_at:
            return task.status not in ("completed", "failed", "cancelled")
        self.updated_at = at
        return False

    async def answer(self, requests: Mapping[str, Any]) -> None:
        """Answer the input requests not answered yet (a server repeats them until it has
        taken the answers in: each key is answered once)."""
        fresh = {k: v for k, v in requests.items() if k not in self.answered}
        if not fresh:
            return
        parsed = {k: _INPUT_REQUEST.validate_python(v, by_name=False) for k, v in fresh.items()}
        responses = await answer_input_requests(self.session, parsed)
        self.answered |= set(fresh)
        params = _UpdateParams(
            task_id=self.task_id,
            input_responses={
                key: response.model_dump(by_alias=True, exclude_none=True)
                for key, response in responses.items()
            },
        )
        await self.session.send_request(_UpdateTask(params=params), types.EmptyResult)

    async def outcome(self, task: DetailedTask) -> types.CallToolResult:
        if task.status == "cancelled":
            raise McpTaskCancelledError(
                tool=self.tool, task_id=self.task_id, status_message=task.status_message
            )
        if task.status == "failed":
            error = task.error or {}
            why = error.get("message") or task.status_message or "no reason given"
            text = f"The task {self.task_id} running tool '{self.tool}' failed: {why}"
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        try:
            result = types.CallToolResult.model_validate(task.result or {}, by_name=False)
        except ValidationError as exc:
            raise RuntimeError(
                f"the task {self.task_id} of tool '{self.tool}' completed with a result that "
                f"is not a tool result: {exc.error_count()} problem(s)"
            ) from exc
        if not result.is_error:
            await self.session.validate_tool_result(self.tool, result)
        return result

    async def cancel(self) -> None:
        """Send ``tasks/cancel`` once, shielded and bounded: the caller may be cancelled."""
        if self.finished:
            return
        self.finished = True
        request = _CancelTask(params=_TaskIdParams(task_id=self.task_id))
        with anyio.move_on_after(CANCEL_GRACE, shield=True) as scope:
            try:
                await self.session.send_request(request, types.EmptyResult)
            except Exception as exc:
                # The original failure (timeout, abort, broken link) is what the caller sees.
                logger.debug("tasks/cancel for task %s failed: %r", self.task_id, exc)
        if scope.cancelled_caught:
            logger.debug("tasks/cancel for task %s got no answer in time", self.task_id)
