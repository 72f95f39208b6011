"""A 2026-07-28 server with the tasks extension (SEP-2663) that pushes task statuses on
``subscriptions/listen`` streams naming the task (``notifications: {taskIds: [...]}``), for
tests of ``glove_mcp.connect.task_stream``. FastMCP 4.1.4's tasks extension does not serve
``subscriptions/listen`` (it answers "Method not found"), so this is written with the mcp SDK's
low-level ``Server`` and handlers of its own.

Every ``tools/call`` creates a task (``resultType: "task"``) that moves only when the test says
(``advance``): the test decides when each status happens. The server records what the client
asked: ``tasks/get`` per status served, listen streams opened and closed, ``tasks/cancel``.

Behaviours (``PushServer`` arguments):
    serve_listen: False answers ``subscriptions/listen`` with "Method not found".
    honour: False acknowledges a listen without the task ids (as the SDK's own listen handler
        does) and pushes nothing.
    ack_after_gets: the acknowledgement waits until that many ``tasks/get`` were served.
    repeat: how many times each status is pushed (a server may send one twice).
    ``push_raw`` pushes a body as given (an out-of-date status, say).
    complete_when_pushed: the task completes by itself right after the acknowledgement and
        the first push of its current state on a stream (so it completes only for a client
        that listens).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

import anyio
import mcp_types as sdk
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

START = datetime(2026, 12, 2, tzinfo=UTC)
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


class _TaskIdParams(sdk.RequestParams):
    task_id: str


class _UpdateParams(sdk.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _PushedTask(sdk.Notification[dict[str, Any], Literal["notifications/tasks"]]):
    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: dict[str, Any]


@dataclass
class PushedTaskState:
    """One task: its status, message, result, and when it last changed."""

    task_id: str
    status: str = "working"
    message: str | None = "queued"
    result: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    version: int = 0
    changed: anyio.Event = field(default_factory=anyio.Event)
    outbox: list[dict[str, Any]] = field(default_factory=list)
    """Bodies to push as they are, before the current state (``PushServer.push_raw``)."""

    def wire(self, poll_interval_ms: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": START.isoformat(),
            "lastUpdatedAt": (START + timedelta(seconds=self.version)).isoformat(),
            "ttlMs": 600_000,
            "pollIntervalMs": poll_interval_ms,
        }
        if self.message is not None:
            body["statusMessage"] = self.message
        if self.result is not None:
            body["result"] = self.result
        if self.input_requests is not None:
            body["inputRequests"] = self.input_requests
        return body

    def label(self) -> str:
        return f"{self.status}: {self.message}" if self.message else self.status


@dataclass
class PushServer:
    """The probe; ``build()`` gives the SDK server to serve."""

    serve_listen: bool = True
    honour: bool = True
    ack_after_gets: int = 0
    repeat: int = 1
    complete_when_pushed: bool = False
    poll_interval_ms: int = 5_000
    tasks: dict[str, PushedTaskState] = field(default_factory=dict)
    polled: Counter[str] = field(default_factory=Counter)
    """``tasks/get`` answers served, by status label (``"working: step 1"``)."""
    gets: int = 0
    requested: Counter[str] = field(default_factory=Counter)
    """Requests received, by method."""
    open_streams: int = 0
    """Task streams open now (a connection's stream for list changes is not counted)."""
    closed_streams: int = 0
    cancelled: list[str] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    """The ``inputResponses`` of every ``tasks/update``."""
    subscribed: dict[str, anyio.Event] = field(default_factory=dict)
    """Per task: set once a stream naming it is acknowledged."""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _got: anyio.Event = field(default_factory=anyio.Event)
    _new_task: anyio.Event = field(default_factory=anyio.Event)

    def build(self) -> Server[Any]:
        server: Server[Any] = Server("pushing", on_list_tools=self._list_tools)
        server.add_request_handler("tasks/get", _TaskIdParams, self._get)
        server.add_request_handler("tasks/cancel", _TaskIdParams, self._cancel)
        server.add_request_handler("tasks/update", _UpdateParams, self._update)
        if self.serve_listen:
            server.add_request_handler(
                "subscriptions/listen", sdk.SubscriptionsListenRequestParams, self._listen
            )
        server.middleware.append(self._observe)
        return server

    @property
    def listens(self) -> int:
        """``subscriptions/listen`` requests naming task ids received (served or not)."""
        return self.requested["subscriptions/listen taskIds"]

    def task(self, number: int = 1) -> PushedTaskState:
        """The ``number``-th task created."""
        return self.tasks[f"task-{number}"]

    async def created(self, number: int = 1) -> PushedTaskState:
        """Wait for the ``number``-th task."""
        while f"task-{number}" not in self.tasks:
            await self._new_task.wait()
        return self.task(number)

    def listening(self, task_id: str) -> anyio.Event:
        return self.subscribed.setdefault(task_id, anyio.Event())

    def advance(
        self,
        task: PushedTaskState,
        status: str,
        message: str | None,
        result: Any = None,
        input_requests: dict[str, Any] | None = None,
    ) -> None:
        """Move ``task`` to a new status; its streams push it."""
        task.status, task.message, task.result = status, message, result
        task.input_requests = input_requests
        task.version += 1
        self._wake(task)

    def push_raw(self, task: PushedTaskState, body: dict[str, Any]) -> None:
        """Push ``body`` on the task's streams as it is (then the current state again)."""
        task.outbox.append(body)
        self._wake(task)

    @staticmethod
    def _wake(task: PushedTaskState) -> None:
        task.changed.set()
        task.changed = anyio.Event()

    async def _list_tools(self, ctx: Any, params: Any) -> sdk.ListToolsResult:
        tool = sdk.Tool(name="job", input_schema={"type": "object"})
        return sdk.ListToolsResult(tools=[tool])

    async def _observe(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        self.requested[ctx.method] += 1
        notifications = (ctx.params or {}).get("notifications")
        if isinstance(notifications, dict) and notifications.get("taskIds"):
            self.requested[f"{ctx.method} taskIds"] += 1
        if ctx.method != "tools/call":
            return await call_next(ctx)
        task = PushedTaskState(f"task-{next(self._ids)}")
        self.tasks[task.task_id] = task
        self._new_task.set()
        self._new_task = anyio.Event()
        return {"resultType": "task", **task.wire(self.poll_interval_ms)}

    async def _get(self, ctx: Any, params: _TaskIdParams) -> dict[str, Any]:
        task = self.tasks.get(params.task_id)
        if task is None:
            raise MCPError(code=sdk.INVALID_PARAMS, message="Task not found")
        self.gets += 1
        self.polled[task.label()] += 1
        self._got.set()
        self._got = anyio.Event()
        return {"resultType": "complete", **task.wire(self.poll_interval_ms)}

    async def _cancel(self, ctx: Any, params: _TaskIdParams) -> dict[str, Any]:
        self.cancelled.append(params.task_id)
        task = self.tasks[params.task_id]
        if task.status in ("working", "input_required"):
            self.advance(task, "cancelled", "cancelled by the client")
        return {"resultType": "complete"}

    async def _update(self, ctx: Any, params: _UpdateParams) -> dict[str, Any]:
        self.updates.append(params.input_responses)
        return {"resultType": "complete"}

    async def _listen(
        self, ctx: ServerRequestContext[Any, Any], params: sdk.SubscriptionsListenRequestParams
    ) -> sdk.SubscriptionsListenResult:
        meta = {SUBSCRIPTION_ID: ctx.request_id}
        wanted = (params.notifications.model_extra or {}).get("taskIds") or []
        if not wanted:
            # A connection's own stream for list changes: acknowledged, honouring nothing.
            await self._acknowledge(ctx, {}, meta)
            await anyio.sleep_forever()
        ids = [i for i in wanted if i in self.tasks] if self.honour else []
        self.open_streams += 1
        try:
            while self.gets < self.ack_after_gets:
                await self._got.wait()
            await self._acknowledge(ctx, {"taskIds": ids} if ids else {}, meta)
            if not ids:
                await anyio.sleep_forever()
            async with anyio.create_task_group() as group:
                for task_id in ids:
                    group.start_soon(self._push, ctx, self.tasks[task_id], meta)
                for task_id in ids:
                    self.listening(task_id).set()
        finally:
            self.open_streams -= 1
            self.closed_streams += 1
        return sdk.SubscriptionsListenResult(_meta=meta)

    @staticmethod
    async def _acknowledge(
        ctx: ServerRequestContext[Any, Any], honoured: dict[str, Any], meta: dict[str, Any]
    ) -> None:
        ack = sdk.SubscriptionsAcknowledgedNotification(
            params=sdk.SubscriptionsAcknowledgedNotificationParams(
                notifications=sdk.SubscriptionFilter.model_validate(honoured), _meta=meta
            )
        )
        await ctx.session.send_notification(ack, related_request_id=ctx.request_id)

    async def _push(
        self, ctx: ServerRequestContext[Any, Any], task: PushedTaskState, meta: dict[str, Any]
    ) -> None:
        first = True
        while True:
            changed = task.changed
            bodies = [{**raw, "_meta": meta} for raw in task.outbox]
            task.outbox.clear()
            bodies += [{**task.wire(self.poll_interval_ms), "_meta": meta}] * self.repeat
            for body in bodies:
                note = cast(Any, _PushedTask(params=body))
                await ctx.session.send_notification(note, related_request_id=ctx.request_id)
            if task.status in ("completed", "failed", "cancelled"):
                return
            if first and self.complete_when_pushed:
                self.advance(task, "completed", None, {"content": [text("done")]})
                first = False
                continue
            first = False
            await changed.wait()


def text(words: str) -> dict[str, Any]:
    """A text content block on the wire."""
    return {"type": "text", "text": words}
