"""Task-augmented tool calls (MCP "tasks", protocol revision 2025-11-25).

A server may answer ``tools/call`` with a *task handle* instead of the result, when the client
asks for one (``params.task``) and the tool allows it (``execution.taskSupport``). The client
then polls ``tasks/get`` and fetches the original ``CallToolResult`` with ``tasks/result``.
``ClientSession`` in mcp 2.3 has the types but no methods for this; ``call_tool_as_task`` drives
the whole exchange over a plain session::

    tools/call {task: {ttl}} ──> CreateTaskResult {task: {taskId, status, pollInterval}}
    tasks/get  (every pollInterval, clamped)  ──> working … input_required | completed | failed
    tasks/result (blocks until terminal; the server sends its elicitation / sampling requests
                  meanwhile, answered by the session's own callbacks) ──> CallToolResult

Outcomes, split by audience as DESIGN says:

- ``completed`` → the server's ``CallToolResult``.
- ``failed`` → a ``CallToolResult`` with ``is_error=True``: the server's own failed result when it
  sends one, else a text naming the task and the server's status message. A failed tool is
  something the model can react to, exactly like a plain call returning ``isError``.
- ``cancelled`` (by the server or another client) → ``McpTaskCancelledError``.
- ``max_wait`` or the poll cap exhausted → ``tasks/cancel`` is sent, then
  ``McpTaskTimeoutError`` (a ``TimeoutError``).
- the caller is cancelled (the agent's request was aborted) → ``tasks/cancel`` is sent in a
  shielded scope with a short deadline, then the cancellation propagates.

``notifications/tasks/status`` are optional for servers and reach a ``ClientSession`` only
through a ``NotificationBinding`` given at construction; this module polls instead, and keeps
polling while ``tasks/result`` blocks so ``on_status`` still sees every change.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import mcp_types
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from glove_mcp.connect.task_stream import TaskStreams
from glove_mcp.errors import McpTaskCancelledError, McpTaskTimeoutError

__all__ = [
    "CANCEL_GRACE",
    "DEFAULT_MAX_POLLS",
    "MAX_POLL_INTERVAL",
    "MIN_POLL_INTERVAL",
    "TaskPolicy",
    "TaskStatusInfo",
    "TaskWatch",
    "call_tool_as_task",
    "poll_interval",
    "wants_task",
]

logger = logging.getLogger(__name__)

MIN_POLL_INTERVAL = 0.05
"""Seconds: the shortest wait between two ``tasks/get``, whatever ``pollInterval`` says."""
MAX_POLL_INTERVAL = 5.0
"""Seconds: the longest wait between two ``tasks/get``, so a status change is seen in time."""
DEFAULT_POLL_INTERVAL = 0.5
"""Seconds between polls when the server suggests no ``pollInterval``."""
DEFAULT_MAX_POLLS = 10_000
"""``tasks/get`` requests per call before giving up (hours at the longest interval)."""
CANCEL_GRACE = 2.0
"""Seconds ``tasks/cancel`` may take when sent on the way out; nobody waits on it longer."""

TaskPolicy = Literal["never", "optional", "always"]
"""When to ask for task execution of a tool whose ``taskSupport`` leaves the choice open."""

_TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
# A server that executes the call at once may ignore `task` and answer the plain result.
_CREATED_OR_RESULT: TypeAdapter[mcp_types.CreateTaskResult | mcp_types.CallToolResult] = (
    TypeAdapter(mcp_types.CreateTaskResult | mcp_types.CallToolResult)
)


@dataclass(frozen=True)
class TaskStatusInfo:
    """One status of a server-side task, as ``on_status`` receives it.

    Attributes:
        task_id: the id the server gave the task.
        status: ``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``.
        status_message: the server's human-readable note on that status, if any.
    """

    task_id: str
    status: mcp_types.TaskStatus
    status_message: str | None = None


class TaskWatch:
    """What a connection hears about its running 2025-11-25 tasks outside their polls.

    The SDK forgets a call's progress token once ``tools/call`` is answered, and hands
    ``notifications/tasks/status`` to no one; both still reach the session's message handler,
    which gives them to this. A task call registers its own progress token (so reports sent
    after the task started keep arriving) and its task id (so pushed statuses count like
    polled ones) for as long as it runs.

    ``streams`` does the same for 2026-07-28 tasks (``glove_mcp.connect.task_stream``): the
    acknowledgements of their status streams arrive here too.
    """

    def __init__(self) -> None:
        self._progress: dict[str | int, ProgressFnT] = {}
        self._status: dict[str, Callable[[mcp_types.Task], Awaitable[None]]] = {}
        self._tokens = itertools.count(1)
        self.streams = TaskStreams()
        """The pushed statuses of the connection's 2026-07-28 tasks."""

    def new_token(self) -> str:
        """A progress token no other call of this connection uses."""
        return f"glove-task-{next(self._tokens)}"

    def watch_progress(self, token: str, callback: ProgressFnT | None) -> None:
        """Send progress notifications for ``token`` to ``callback`` (None: drop them)."""
        if callback is not None:
            self._progress[token] = callback

    def watch_status(
        self, task_id: str, callback: Callable[[mcp_types.Task], Awaitable[None]]
    ) -> None:
        """Send ``notifications/tasks/status`` for ``task_id`` to ``callback``."""
        self._status[task_id] = callback

    def forget(self, token: str, task_id: str | None) -> None:
        """Stop delivering for a call that ended."""
        self._progress.pop(token, None)
        if task_id is not None:
            self._status.pop(task_id, None)

    async def deliver(self, message: object) -> bool:
        """Hand a notification to the call watching it; False when nobody is."""
        if isinstance(message, mcp_types.ProgressNotification):
            params = message.params
            callback = self._progress.get(params.progress_token)
            if callback is not None:
                await callback(params.progress, params.total, params.message)
                return True
        elif isinstance(message, mcp_types.TaskStatusNotification):
            watcher = self._status.get(message.params.task_id)
            if watcher is not None:
                await watcher(message.params)
                return True
        elif isinstance(message, mcp_types.SubscriptionsAcknowledgedNotification):
            return self.streams.acknowledged(message)
        return False


def wants_task(task_support: str | None, policy: TaskPolicy) -> bool:
    """Whether a call to a tool should be task-augmented.

    Args:
        task_support: the tool's ``execution.taskSupport`` (``"forbidden"``, ``"optional"``,
            ``"required"``, or None when the server did not say, which means forbidden).
        policy: the caller's preference for tools where tasks are optional: ``"never"`` calls
            them plainly; ``"optional"`` and ``"always"`` use tasks. Both coincide today
            because ``"optional"`` is the only support level that leaves a choice.

    Returns:
        True for ``"required"`` whatever the policy (a plain call would fail), True for
        ``"optional"`` unless the policy is ``"never"``, False otherwise.
    """
    if task_support == "required":
        return True
    if task_support == "optional":
        return policy != "never"
    return False


@dataclass
class _Run:
    """What one call knows about its task; shared by the driver, the poller and the cleanup."""

    session: ClientSession
    tool: str
    task_id: str
    status: mcp_types.TaskStatus
    status_message: str | None
    poll_interval: float
    on_status: Callable[[TaskStatusInfo], Awaitable[None]] | None
    max_polls: int
    polls: int = 0
    cancel_sent: bool = False
    exhausted: McpTaskTimeoutError | None = None

    @property
    def terminal(self) -> bool:
        return self.status in _TERMINAL

    def raise_if_cancelled(self) -> None:
        """Raise ``McpTaskCancelledError`` if the server reports the task cancelled."""
        if self.status == "cancelled":
            raise McpTaskCancelledError(
                tool=self.tool, task_id=self.task_id, status_message=self.status_message
            )

    async def see(self, task: mcp_types.Task, *, first: bool = False) -> None:
        """Record a task state from the server and report it if it changed."""
        changed = first or (task.status, task.status_message) != (
            self.status,
            self.status_message,
        )
        self.status, self.status_message = task.status, task.status_message
        self.poll_interval = poll_interval(task.poll_interval)
        if changed and self.on_status is not None:
            await self.on_status(TaskStatusInfo(task.task_id, task.status, task.status_message))

    async def poll(self) -> None:
        """Wait the suggested interval, then ask ``tasks/get`` once."""
        if self.polls >= self.max_polls:
            raise McpTaskTimeoutError(
                tool=self.tool,
                task_id=self.task_id,
                status=self.status,
                status_message=self.status_message,
                limit=f"{self.max_polls} polls",
            )
        await anyio.sleep(self.poll_interval)
        self.polls += 1
        request = mcp_types.GetTaskRequest(
            params=mcp_types.GetTaskRequestParams(task_id=self.task_id)
        )
        await self.see(await self.session.send_request(request, mcp_types.GetTaskResult))

    async def cancel(self) -> None:
        """Send ``tasks/cancel`` once, bounded and shielded: the caller may be cancelled."""
        if self.cancel_sent or self.terminal:
            return
        self.cancel_sent = True
        request = mcp_types.CancelTaskRequest(
            params=mcp_types.CancelTaskRequestParams(task_id=self.task_id)
        )
        with anyio.move_on_after(CANCEL_GRACE, shield=True) as scope:
            try:
                await self.session.send_request(request, mcp_types.CancelTaskResult)
            except Exception as exc:
                # The original failure (timeout, abort, broken link) is what the caller must see.
                logger.debug("tasks/cancel for task %s failed: %r", self.task_id, exc)
        if scope.cancelled_caught:
            logger.debug("tasks/cancel for task %s got no answer in time", self.task_id)


def poll_interval(suggested_ms: int | None) -> float:
    """Seconds to wait before the next ``tasks/get``: the server's suggestion (milliseconds)
    clamped to ``MIN_POLL_INTERVAL``..``MAX_POLL_INTERVAL``, ``DEFAULT_POLL_INTERVAL`` without
    one."""
    if suggested_ms is None:
        return DEFAULT_POLL_INTERVAL
    return min(max(suggested_ms / 1000, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL)


async def call_tool_as_task(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    ttl_ms: int | None = None,
    max_wait: float | None,
    on_status: Callable[[TaskStatusInfo], Awaitable[None]] | None = None,
    progress_callback: ProgressFnT | None = None,
    max_polls: int = DEFAULT_MAX_POLLS,
    watch: TaskWatch | None = None,
) -> mcp_types.CallToolResult:
    """Call a tool as a task and wait for its result.

    Args:
        session: an initialized session. Its elicitation and sampling callbacks answer the
            requests the server sends while the task is ``input_required``.
        name: the tool's name on the server.
        arguments: the tool's arguments.
        ttl_ms: how long the server should keep the task after creation, in milliseconds;
            None lets the server choose.
        max_wait: seconds to wait for the task to finish, counted from the ``tools/call``;
            None waits as long as the poll cap allows.
        on_status: awaited with every status the task reports that differs from the last
            one (the first included), e.g. to turn into progress events.
        progress_callback: gets the server's progress reports. Without ``watch`` it goes to
            ``tools/call`` and ``tasks/result``, and reports a server sends after
            ``CreateTaskResult`` are not heard (the SDK drops the token once ``tools/call`` is
            answered); with ``watch``, every report for the call's own token is heard.
        max_polls: ``tasks/get`` requests allowed before giving up.
        watch: the connection's ``TaskWatch`` (its session's message handler feeds it):
            progress after the task started, and pushed ``notifications/tasks/status``.

    Returns:
        The tool's ``CallToolResult``; for a ``failed`` task one with ``is_error=True`` that
        says why. A server that ignores the task request and answers plainly is answered as is.

    Raises:
        McpTaskCancelledError: the server reports the task cancelled.
        McpTaskTimeoutError: ``max_wait`` elapsed or ``max_polls`` ran out (the task was
            cancelled on the server first).
        mcp.shared.exceptions.MCPError: a JSON-RPC error for ``tools/call`` or ``tasks/*``.
        RuntimeError: the result does not match the tool's output schema (as ``call_tool``).
    """
    token: str | None = None
    if watch is not None:
        token = watch.new_token()
        watch.watch_progress(token, progress_callback)
        progress_callback = None  # delivered through the watch only, never twice
    try:
        return await _call_as_task(
            session,
            name,
            arguments,
            ttl_ms,
            max_wait,
            on_status,
            progress_callback,
            max_polls,
            watch,
            token,
        )
    finally:
        if watch is not None and token is not None:
            watch.forget(token, None)


async def _call_as_task(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any] | None,
    ttl_ms: int | None,
    max_wait: float | None,
    on_status: Callable[[TaskStatusInfo], Awaitable[None]] | None,
    progress_callback: ProgressFnT | None,
    max_polls: int,
    watch: TaskWatch | None,
    token: str | None,
) -> mcp_types.CallToolResult:
    created = await _create(session, name, arguments, ttl_ms, progress_callback, token)
    if isinstance(created, mcp_types.CallToolResult):
        if not created.is_error:
            await session.validate_tool_result(name, created)
        return created
    task = created.task
    run = _Run(
        session=session,
        tool=name,
        task_id=task.task_id,
        status=task.status,
        status_message=task.status_message,
        poll_interval=poll_interval(task.poll_interval),
        on_status=on_status,
        max_polls=max_polls,
    )
    if watch is not None:
        watch.watch_status(task.task_id, run.see)
    try:
        with anyio.move_on_after(math.inf if max_wait is None else max_wait):
            await run.see(task, first=True)
            result = await _drive(run, progress_callback)
            if not result.is_error:
                await session.validate_tool_result(name, result)
            return result
        raise McpTaskTimeoutError(
            tool=name,
            task_id=run.task_id,
            status=run.status,
            status_message=run.status_message,
            limit=f"max_wait={max_wait}s",
        )
    except BaseException:
        # Abort, timeout or a broken link: the server must not keep working for nobody.
        await run.cancel()
        raise
    finally:
        if watch is not None:
            watch.forget("", task.task_id)


async def _create(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any] | None,
    ttl_ms: int | None,
    progress_callback: ProgressFnT | None,
    token: str | None = None,
) -> mcp_types.CreateTaskResult | mcp_types.CallToolResult:
    params = mcp_types.CallToolRequestParams(
        name=name, arguments=arguments, task=mcp_types.TaskMetadata(ttl=ttl_ms)
    )
    if token is not None:
        # Our own token: the SDK would forget its own once tools/call is answered.
        params = mcp_types.CallToolRequestParams(
            name=name,
            arguments=arguments,
            task=mcp_types.TaskMetadata(ttl=ttl_ms),
            _meta={"progress_token": token},
        )
    request = mcp_types.CallToolRequest(params=params)
    try:
        return await session.send_request(
            request, _CREATED_OR_RESULT, progress_callback=progress_callback
        )
    except ValidationError as exc:
        # mcp 2.3 checks every tools/call answer against the negotiated revision's
        # CallToolResult before our result type sees it, so a CreateTaskResult fails there. The
        # error carries the answer the server sent; the task exists server-side and must not
        # be lost, so it is read back from the error.
        created = _created_from(exc)
        if created is None:
            raise
        return created


def _created_from(exc: ValidationError) -> mcp_types.CreateTaskResult | None:
    for error in exc.errors():
        answer = error.get("input")
        if isinstance(answer, dict) and "task" in answer:
            try:
                return mcp_types.CreateTaskResult.model_validate(answer, by_name=False)
            except ValidationError:
                return None
    return None


async def _drive(run: _Run, progress_callback: ProgressFnT | None) -> mcp_types.CallToolResult:
    """Poll until the task needs ``tasks/result`` (input or a final state), then fetch it."""
    while run.status == "working":
        await run.poll()
    run.raise_if_cancelled()
    payload, error = await _fetch_result(run, progress_callback)
    run.raise_if_cancelled()
    if run.status == "failed" or (payload is not None and payload.is_error):
        return _failed(run, payload, error)
    if error is not None:
        raise error
    assert payload is not None  # one of the two is always set
    return payload


async def _fetch_result(
    run: _Run, progress_callback: ProgressFnT | None
) -> tuple[mcp_types.CallToolResult | None, MCPError | None]:
    """Call ``tasks/result`` while a poller keeps ``run.status`` current.

    ``tasks/result`` blocks until the task is terminal; the spec says to call it as soon as
    the task is ``input_required``, because the server delivers its requests to us through it.
    """
    request = mcp_types.GetTaskPayloadRequest(
        params=mcp_types.GetTaskPayloadRequestParams(task_id=run.task_id)
    )
    payload: mcp_types.CallToolResult | None = None
    error: MCPError | None = None
    async with anyio.create_task_group() as group:
        if not run.terminal:
            group.start_soon(_keep_polling, run, group.cancel_scope)
        try:
            # The payload is the original request's result: validate it as CallToolResult
            # (GetTaskPayloadResult keeps none of its fields).
            payload = await run.session.send_request(
                request, mcp_types.CallToolResult, progress_callback=progress_callback
            )
        except MCPError as exc:
            # A failed task may answer with the JSON-RPC error the call itself would have had.
            error = exc
        group.cancel_scope.cancel()
    if run.exhausted is not None:
        raise run.exhausted
    if not run.terminal:
        # The poller may not have caught the final state; one more look names it.
        try:
            request_get = mcp_types.GetTaskRequest(
                params=mcp_types.GetTaskRequestParams(task_id=run.task_id)
            )
            await run.see(await run.session.send_request(request_get, mcp_types.GetTaskResult))
        except MCPError as exc:
            logger.debug("tasks/get after tasks/result failed for %s: %r", run.task_id, exc)
    return payload, error


async def _keep_polling(run: _Run, waiting: anyio.CancelScope) -> None:
    """Report status changes while ``tasks/result`` blocks.

    A failing ``tasks/get`` only stops the polling: ``tasks/result`` is still the authority on
    the outcome. The poll cap, though, also ends the wait (``waiting``), or a server that never
    finishes would hold a call without ``max_wait`` forever.
    """
    try:
        while not run.terminal:
            await run.poll()
    except McpTaskTimeoutError as exc:
        run.exhausted = exc
        waiting.cancel()
    except MCPError as exc:
        logger.debug("status polling for task %s stopped: %r", run.task_id, exc)


def _failed(
    run: _Run, payload: mcp_types.CallToolResult | None, error: MCPError | None
) -> mcp_types.CallToolResult:
    if payload is not None and payload.content:
        return payload.model_copy(update={"is_error": True})
    why = run.status_message or (error.message if error is not None else None) or "no reason given"
    text = f"The task {run.task_id} running tool '{run.tool}' failed: {why}"
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)
