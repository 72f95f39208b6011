"""Durable turns on DBOS: a turn is a workflow, each part of it a checkpointed step.

``DbosExecution`` (the ``durable`` extra: ``pip install 'glove-agents[durable]'``) keeps its
state in DBOS's system tables on the PostgreSQL database the conversations live in. A turn is
the workflow ``glove.turn``; its steps, numbered in the order the loop calls them, are the
conversation's length at the start (``glove.position``), the start of the request
(``glove.start``), each model call with the saves around it (``glove.model``), each tool call
(``glove.tool.prepare`` — input check and permission — and ``glove.tool.invoke``, or one
``glove.tool`` for an idempotent tool) and the save of each reply's results
(``glove.results``). Each step records what it changed in the request's state, so a replay
rebuilds the state without touching the store, the model or the tools.

After a crash the conversation's turn lock (a PostgreSQL advisory lock) is free: the next
instance that holds it — for a new request, an outside event, or the sweep of
``unfinished_conversations`` — resumes the workflow on a DBOS queue only this instance reads,
and waits for it while holding the conversation. Completed steps are not run again; a tool call
that was in flight is run again only when its tool is idempotent, else answered
``INTERRUPTED_NOT_RUN``.

Upgrades: every workflow carries ``TURN_FORMAT`` as its DBOS application version. A workflow of
another format is never replayed: it is cancelled, and the conversation's next turn answers its
open tool calls as interrupted (the ordinary repair of a crashed turn).

DBOS is one per process: one ``DbosExecution`` per process, shared by every Glove.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from dbos import DBOS, DBOSConfig, SetWorkflowID, StepOptions

from glove_core.event_queue import OutsideEvent
from glove_core.execution import Turn
from glove_core.result import RequestResult
from glove_core.steps import ToolStep
from glove_core.types import Message, ToolResult

__all__ = ["TURN_FORMAT", "TURN_WORKFLOW", "DbosExecution"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

TURN_FORMAT = "glove-turn-1"
"""The order and meaning of a turn's steps. Bumped whenever either changes: workflows recorded
under another format are not replayed (see the module's docstring)."""

TURN_WORKFLOW = "glove.turn"

_PREFIX = "glove-turn:"
_QUEUE_POLL = 0.2  # seconds between looks at this instance's resume queue


def _prefix(conversation: str) -> str:
    # The length first: no conversation's prefix is another's.
    return f"{_PREFIX}{len(conversation)}:{conversation}:"


def _conversation_of(workflow_id: str) -> str | None:
    rest = workflow_id.removeprefix(_PREFIX)
    length, _, tail = rest.partition(":")
    if not length.isdigit() or len(tail) <= int(length):
        return None
    return tail[: int(length)]


@dataclass(frozen=True)
class _Live:
    """A turn this process runs or resumes: what the workflow's body needs that is no input."""

    turn: Turn
    loop: asyncio.AbstractEventLoop
    resumed: bool


_LIVE: dict[str, _Live] = {}


class _DbosSteps:
    """``TurnSteps`` on DBOS steps, for one execution of one workflow."""

    def __init__(self, *, resumed: bool) -> None:
        self._resumed = resumed

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        async def run() -> T:
            return await fn()

        return await DBOS.run_step_async(_options(name), run)

    def first_live_step(self) -> bool:
        resumed, self._resumed = self._resumed, False
        return resumed

    async def tool_calls(self, steps: Sequence[ToolStep], *, parallel: bool) -> list[ToolResult]:
        # Step numbers are drawn now, in the calls' order, so concurrent calls keep theirs on
        # every replay.
        runs = [self._tool_call(s) for s in steps]
        if parallel:
            return list(await asyncio.gather(*runs))
        return [await run for run in runs]

    def _tool_call(self, step: ToolStep) -> Any:
        if step.idempotent:
            only = DBOS.reserve_step()

            async def idempotent() -> ToolResult:
                async def whole() -> ToolResult:
                    refused = await step.prepare()
                    return refused if refused is not None else await step.invoke()

                result: ToolResult = await only.run_async(_options("glove.tool"), whole)
                return result

            return idempotent()
        prepare, invoke = DBOS.reserve_step(), DBOS.reserve_step()

        async def once() -> ToolResult:
            prepared_here = False

            async def checked() -> ToolResult | None:
                nonlocal prepared_here
                prepared_here = True
                return await step.prepare()

            refused = await prepare.run_async(_options("glove.tool.prepare"), checked)
            if refused is not None:
                return refused
            # Prepared by the process that died and not recorded as done: the call may have
            # run. A recorded result, if any, comes back from the step whatever the function.
            chosen = step.invoke if prepared_here else step.interrupted

            async def ran() -> ToolResult:
                return await chosen()

            result: ToolResult = await invoke.run_async(_options("glove.tool.invoke"), ran)
            return result

        return once()


def _options(name: str) -> StepOptions:
    # A step that raised is not retried: the loop answers every failure itself.
    return {"name": name, "retries_allowed": False}


@DBOS.workflow(name=TURN_WORKFLOW)
async def _turn_workflow(
    conversation: str, request: Message, events: list[OutsideEvent] | None
) -> RequestResult:
    workflow_id = DBOS.workflow_id
    live = _LIVE.get(workflow_id or "")
    if live is None:
        # Dequeued by an instance that does not hold the conversation: never by design (each
        # instance resumes on a queue only it reads), so refuse rather than run unguarded.
        raise RuntimeError(f"turn {workflow_id!r} of {conversation!r} is not held here")
    steps = _DbosSteps(resumed=live.resumed)
    run = live.turn.run(request, events, steps)
    if asyncio.get_running_loop() is live.loop:
        return await run
    # DBOS runs a dequeued workflow on its own event loop; the Glove's store, tools and locks
    # belong to the server's. The DBOS context (a context variable) travels with the call.
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run, live.loop))


class DbosExecution:
    """Runs every turn as a DBOS workflow on the conversations' PostgreSQL database.

    Args:
        database_url: the PostgreSQL URL (``postgresql://…``) the conversations use; DBOS keeps
            its tables in the schema ``dbos`` there.
        instance: this process's name among the instances (DBOS's executor id); a fresh one
            when omitted. Unique per running process.

    Use ``async with DbosExecution(url) as execution:`` (or ``await execution.start()`` and
    ``await execution.aclose()``), then ``Glove(..., execution=execution)`` for every
    conversation whose store is a ``PostgresStore`` on the same database.
    """

    def __init__(self, database_url: str, *, instance: str | None = None) -> None:
        if not database_url.startswith(("postgresql://", "postgres://")):
            raise ValueError("DbosExecution needs a postgresql:// database URL")
        self._url = database_url
        self.instance = instance or f"glove-{uuid.uuid4().hex[:12]}"
        self.queue = f"glove-turns-{self.instance}"
        self._started = False

    async def start(self) -> None:
        """Launch DBOS (creating or migrating its tables) and this instance's resume queue."""
        if self._started:
            return
        await asyncio.to_thread(self._launch)
        await DBOS.register_queue_async(self.queue, polling_interval_sec=_QUEUE_POLL)
        self._started = True

    def _launch(self) -> None:
        config: DBOSConfig = {
            "name": "glove",
            "system_database_url": self._url,
            "executor_id": self.instance,
            "application_version": TURN_FORMAT,
            "sys_db_pool_size": 10,
            "log_level": "WARNING",
        }
        DBOS(config=config)
        DBOS.listen_queues([self.queue])
        DBOS.launch()

    async def aclose(self) -> None:
        """Shut DBOS down in this process; unfinished turns stay resumable."""
        if self._started:
            self._started = False
            await asyncio.to_thread(DBOS.destroy, workflow_completion_timeout_sec=0)

    async def __aenter__(self) -> DbosExecution:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run_turn(
        self, turn: Turn, request: Message, events: list[OutsideEvent] | None
    ) -> RequestResult:
        """Resume the conversation's unfinished turns, then run this one as a workflow."""
        self._check_started()
        await self.resume_turns(turn)
        workflow_id = f"{_prefix(turn.conversation)}{uuid.uuid4().hex}"
        _LIVE[workflow_id] = _Live(turn, asyncio.get_running_loop(), resumed=False)
        try:
            with SetWorkflowID(workflow_id):
                return await _turn_workflow(turn.conversation, request, events)
        finally:
            del _LIVE[workflow_id]

    async def resume_turns(self, turn: Turn) -> int:
        """Finish the turns of ``turn.conversation`` a dead instance left (the caller holds
        the conversation, so no live instance runs them); return how many."""
        self._check_started()
        pending = await DBOS.list_workflows_async(
            workflow_id_prefix=_prefix(turn.conversation),
            status=["PENDING", "ENQUEUED"],
            load_input=False,
            load_output=False,
        )
        resumed = 0
        for workflow in sorted(pending, key=lambda w: w.created_at or 0):
            workflow_id = workflow.workflow_id
            if workflow_id in _LIVE:
                continue
            if workflow.app_version != TURN_FORMAT:
                logger.warning(
                    "turn %s was recorded by another version (%s, this is %s): not replayed; "
                    "its open tool calls are answered as interrupted",
                    workflow_id,
                    workflow.app_version,
                    TURN_FORMAT,
                )
                await DBOS.cancel_workflow_async(workflow_id)
                continue
            logger.info("resuming turn %s of %r", workflow_id, turn.conversation)
            _LIVE[workflow_id] = _Live(turn, asyncio.get_running_loop(), resumed=True)
            try:
                handle = await DBOS.resume_workflow_async(workflow_id, queue_name=self.queue)
                await handle.get_result()
            finally:
                del _LIVE[workflow_id]
            resumed += 1
        return resumed

    async def unfinished_conversations(self, *, older_than: float = 0.0) -> list[str]:
        """The conversations with an unfinished turn that this instance does not run:
        candidates for ``Glove.resume_interrupted`` (a live instance's turn holds its
        conversation, so resuming waits for it and then finds nothing).

        Args:
            older_than: only turns started at least this many seconds ago (a young turn is
                most likely running on a live instance).
        """
        self._check_started()
        pending = await DBOS.list_workflows_async(
            workflow_id_prefix=_PREFIX,
            status=["PENDING"],
            load_input=False,
            load_output=False,
        )
        started_before = (time.time() - older_than) * 1000
        found: list[str] = []
        for workflow in pending:
            if workflow.workflow_id in _LIVE or workflow.executor_id == self.instance:
                continue
            if (workflow.created_at or 0) > started_before:
                continue
            conversation = _conversation_of(workflow.workflow_id)
            if conversation is not None and conversation not in found:
                found.append(conversation)
        return found

    def _check_started(self) -> None:
        if not self._started:
            raise RuntimeError("DbosExecution is not started: use `async with` or start()")

    def __repr__(self) -> str:
        return f"<DbosExecution instance={self.instance!r} started={self._started}>"
