"""How one ``tools/call`` runs on an open session: plainly, driving any
``InputRequiredResult`` rounds to the result and following a task the server chose to create
(2026-07-28 tasks extension), or as a task the client asks for (2025-11-25 revision). Task
status changes are reported as progress."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import mcp_types as types
from mcp.client.session import ClientSession

from glove_mcp.connect.mcp_server_requests import ProgressGate, resolve_input_required
from glove_mcp.connect.task_stream import TaskStreams
from glove_mcp.connect.tasks import TaskStatusInfo, TaskWatch, call_tool_as_task
from glove_mcp.connect.tasks_extension import CreatedTask, drive_task

__all__ = ["plain_call", "task_call"]


async def plain_call(
    session: ClientSession,
    name: str,
    args: dict[str, Any] | None,
    gate: ProgressGate,
    max_wait: float | None = None,
    meta: dict[str, Any] | None = None,
    streams: TaskStreams | None = None,
) -> types.CallToolResult:
    """Call ``name``; when the server answers that it needs input first, answer its requests
    and call again with the answers and its state, round after round, until it answers. When
    it answers with a task handle (2026-07-28), follow the task to its result (up to
    ``max_wait``), each new status going to ``gate``, pushed ones too (through ``streams``)."""

    async def again(
        responses: types.InputResponses | None, state: str | None
    ) -> types.CallToolResult | types.InputRequiredResult | CreatedTask:
        answer = await session.call_tool(
            name,
            arguments=args,
            progress_callback=gate,
            input_responses=responses,
            request_state=state,
            meta=cast("types.RequestParamsMeta | None", meta),
            allow_input_required=True,
            allow_claimed=True,
        )
        if isinstance(answer, types.CallToolResult | types.InputRequiredResult | CreatedTask):
            return answer
        raise TypeError(f"tools/call {name!r}: unexpected result {type(answer).__name__}")

    first = await again(None, None)
    done = await resolve_input_required(session, first, again)
    if isinstance(done, CreatedTask):
        return await drive_task(
            session, name, done, max_wait=max_wait, on_status=_status(gate), streams=streams
        )
    assert isinstance(done, types.CallToolResult)  # what again() lets through
    return done


def _status(gate: ProgressGate) -> Callable[[TaskStatusInfo], Awaitable[None]]:
    """Task statuses as progress reports: a count, no total, the status as message."""
    seen = 0

    async def status(info: TaskStatusInfo) -> None:
        nonlocal seen
        seen += 1
        said = f": {info.status_message}" if info.status_message else ""
        await gate(seen, None, f"task {info.status}{said}")

    return status


async def task_call(
    session: ClientSession,
    name: str,
    args: dict[str, Any] | None,
    gate: ProgressGate,
    max_wait: float | None,
    watch: TaskWatch | None = None,
) -> types.CallToolResult:
    """Call ``name`` as a task and wait (up to ``max_wait``) for its result; each new status
    goes to ``gate`` as a progress report (a count, no total, the status as message), and
    so does the server's own progress, also after the task started (through ``watch``)."""
    return await call_tool_as_task(
        session,
        name,
        args,
        max_wait=max_wait,
        on_status=_status(gate),
        progress_callback=gate.sibling() if watch is not None else None,
        watch=watch,
    )
