"""Pushed task statuses of the 2026-07-28 tasks extension (SEP-2663): ``notifications/tasks``
on a ``subscriptions/listen`` stream of the task's own.

A server *may* push a task's statuses as well as answer polls. The client asks for them
with ``subscriptions/listen`` whose filter names the task (``notifications: {taskIds: [id]}``);
the server acknowledges with the ids it agreed to (``notifications/subscriptions/acknowledged``)
and then sends ``notifications/tasks``, each a complete ``DetailedTask`` (what ``tasks/get``
would answer at that moment: status, message, and the result, error or input requests inline).
A listen filter is fixed when the stream opens, so each task gets a stream of its own, closed
when the task ends (or the call is cancelled, or times out).

Routing. The SDK's ``listen()`` knows only the core notification kinds, so the stream is a
plain ``send_request`` that lasts as long as the subscription. The pushed tasks reach a
``NotificationBinding`` (``binding()``), routed to the follower of that task id; the stream's
acknowledgement reaches the session's message handler (``acknowledged()``): the SDK consumes
the acknowledgements of its own ``listen()`` streams, so one that arrives there is for a task
stream. One that names no task ids closes that stream, and the follower polls as before; after
``MAX_UNHONOURED`` in a row the server is taken not to honour them and this connection stops
asking (``refused``). A server that does not serve ``subscriptions/listen`` at all (an error
answer: method not found, missing capability) is not asked again after that first answer.
None of it is said to the application.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.client.extension import NotificationBinding
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MAX_UNHONOURED",
    "PUSHED_METHOD",
    "STREAMED_POLL_INTERVAL",
    "PushedTask",
    "TaskPushes",
    "TaskStreams",
    "follow_pushes",
]

logger = logging.getLogger(__name__)

PUSHED_METHOD = "notifications/tasks"
"""The method of a pushed task status (the extension's ``TaskStatusNotification``)."""

STREAMED_POLL_INTERVAL = 30.0
"""Seconds between two ``tasks/get`` while the server pushes the task's statuses. The extension
lets a subscribed client stop polling; a slow poll stays as a backstop against a stream that
stays open but goes silent."""

MAX_UNHONOURED = 2
"""Acknowledgements in a row that name no task after which a connection stops asking."""

CLOSE_GRACE = 2.0
"""Seconds closing a task's stream may take on the way out; nobody waits on it longer."""

MAX_QUEUED = 64
"""Pushed statuses kept for a follower that has not read them yet (the oldest go first)."""

# Answers to subscriptions/listen that say "not here, not ever": no such method, or a missing
# capability (the tasks extension is declared on every request, so the server did not see it).
_REFUSALS = frozenset({types.METHOD_NOT_FOUND, types.MISSING_REQUIRED_CLIENT_CAPABILITY})
# Filter keys of the core notification kinds: a task stream asks for none of them, so an
# acknowledgement that honours one belongs to another stream.
_CORE_KINDS = ("tools_list_changed", "prompts_list_changed", "resources_list_changed")


class PushedTask(BaseModel):
    """The params of ``notifications/tasks``: a ``DetailedTask``, kept whole (unknown keys
    too) for the follower to read as it reads a ``tasks/get`` answer."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_id: str = Field(alias="taskId")


class TaskPushes:
    """What the server pushed for one task, waiting for its follower.

    Inert (never fed) when the server is not asked: ``wait`` then only sleeps.
    """

    def __init__(self) -> None:
        self._queue: deque[dict[str, Any]] = deque(maxlen=MAX_QUEUED)
        self._wake = anyio.Event()
        self.listening = False
        """True while the task's stream is open."""
        self.acknowledged: bool | None = None
        """Whether the server's acknowledgement named the task (None: none came yet)."""
        self.received = 0
        """Statuses pushed so far."""
        self.listener: asyncio.Task[None] | None = None

    @property
    def flowing(self) -> bool:
        """The stream is open and has delivered: polling may slow to the backstop."""
        return self.listening and self.received > 0

    def push(self, task: dict[str, Any]) -> None:
        """Queue a pushed status (its wire form)."""
        self._queue.append(task)
        self.received += 1
        self._wake.set()

    def ended(self) -> None:
        """The stream is gone: the follower goes back to polling at the server's pace."""
        self.listening = False
        self._wake.set()

    def take(self) -> dict[str, Any] | None:
        """The oldest status not read yet, if any."""
        return self._queue.popleft() if self._queue else None

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a pushed status or the stream's end; False on time out."""
        if self._queue:
            return True
        wake = self._wake
        with anyio.move_on_after(seconds):
            await wake.wait()
            self._wake = anyio.Event()
            return True
        return False


class TaskStreams:
    """The pushed statuses of one connection's running 2026-07-28 tasks, by task id."""

    def __init__(self) -> None:
        self._routes: dict[str, TaskPushes] = {}
        self.refused = False
        """The server does not serve task statuses on ``subscriptions/listen``: not asked
        again on this connection."""
        self.unhonoured = 0
        """Acknowledgements in a row that named no task."""
        self.opened = 0
        """Task streams opened so far."""

    @property
    def following(self) -> int:
        """Tasks whose statuses are routed now (each with its stream)."""
        return len(self._routes)

    def binding(self) -> NotificationBinding[PushedTask]:
        """The SDK session's binding for ``notifications/tasks`` (a method the core protocol
        does not define, so the SDK hands it to bindings only)."""
        return NotificationBinding(
            method=PUSHED_METHOD, params_type=PushedTask, handler=self._pushed
        )

    async def _pushed(self, task: PushedTask) -> None:
        route = self._routes.get(task.task_id)
        if route is not None:
            route.push(task.model_dump(by_alias=True))

    def acknowledged(self, note: types.SubscriptionsAcknowledgedNotification) -> bool:
        """Take in a stream's acknowledgement; False when it is not a task stream's."""
        honoured = note.params.notifications
        if any(getattr(honoured, kind) for kind in _CORE_KINDS) or honoured.resource_subscriptions:
            return False
        ids = (honoured.model_extra or {}).get("taskIds")
        named = {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()
        if named:
            self.unhonoured = 0
            for task_id in named:
                if (route := self._routes.get(task_id)) is not None:
                    route.acknowledged = True
            return True
        # Names no task: the acknowledgement of the oldest stream still waiting for one
        # (acknowledgements come in the order the server took the streams), which would carry
        # nothing, so it is closed. A server may leave out a task it no longer serves (one that
        # just ended), so only MAX_UNHONOURED in a row say it serves none.
        self.unhonoured += 1
        if self.unhonoured >= MAX_UNHONOURED and not self.refused:
            self.refused = True
            logger.debug("the server does not push task statuses (taskIds not honoured)")
        waiting = [r for r in self._routes.values() if r.acknowledged is None]
        if waiting:
            waiting[0].acknowledged = False
            if waiting[0].listener is not None:
                waiting[0].listener.cancel()
        return True

    @asynccontextmanager
    async def follow(self, session: ClientSession, task_id: str) -> AsyncIterator[TaskPushes]:
        """Route the statuses pushed for ``task_id`` while the block runs, on a stream of its
        own when the server may serve one; the stream is closed on the way out."""
        pushes = TaskPushes()
        if self.refused or session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            yield pushes
            return
        self._routes[task_id] = pushes
        pushes.listening = True
        self.opened += 1
        listener = pushes.listener = asyncio.create_task(
            self._listen(session, task_id, pushes), name=f"mcp-task-stream:{task_id}"
        )
        try:
            yield pushes
        finally:
            self._routes.pop(task_id, None)
            listener.cancel()
            # Shielded and bounded: the caller may be cancelled, and closing the stream (the
            # SDK's courtesy cancel) must neither outlive it nor hold it.
            with anyio.move_on_after(CLOSE_GRACE, shield=True):
                await asyncio.wait({listener})

    async def _listen(self, session: ClientSession, task_id: str, pushes: TaskPushes) -> None:
        wanted = types.SubscriptionFilter.model_validate({"taskIds": [task_id]})
        request = types.SubscriptionsListenRequest(
            params=types.SubscriptionsListenRequestParams(notifications=wanted)
        )
        try:
            # Answered only when the server ends the stream; cancelled when the task ends.
            await session.send_request(request, types.SubscriptionsListenResult)
        except MCPError as exc:
            if exc.error.code in _REFUSALS:
                self.refused = True
            logger.debug("no task status stream for task %s: %s", task_id, exc.error.message)
        except Exception as exc:
            logger.debug("the task status stream for task %s ended: %r", task_id, exc)
        finally:
            pushes.ended()


@asynccontextmanager
async def follow_pushes(
    streams: TaskStreams | None, session: ClientSession, task_id: str
) -> AsyncIterator[TaskPushes]:
    """``streams.follow(session, task_id)``, or an inert ``TaskPushes`` without streams."""
    if streams is None:
        yield TaskPushes()
        return
    async with streams.follow(session, task_id) as pushes:
        yield pushes
