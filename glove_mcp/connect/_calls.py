"""How one ``tools/call`` runs on an open session: plainly, driving any
``InputRequiredResult`` rounds to the result, or as a task (2025-11-25 revision) whose status
changes are reported as progress."""

from __future__ import annotations

from typing import Any, cast

import mcp_types as types
from mcp.client.session import ClientSession

from glove_mcp.connect.mcp_server_requests import ProgressGate, resolve_input_required
from glove_mcp.connect.tasks import TaskStatusInfo, call_tool_as_task

__all__ = ["plain_call", "task_call"]


async def plain_call(
    session: ClientSession,
    name: str,
    args: dict[str, Any] | None,
    gate: ProgressGate,
    meta: dict[str, Any] | None = None,
) -> types.CallToolResult:
    """Call ``name``; when the server answers that it needs input first, answer its requests
    and call again with the answers and its state, round after round, until it answers."""

    async def again(
        responses: types.InputResponses | None, state: str | None
    ) -> types.CallToolResult | types.InputRequiredResult:
        return await session.call_tool(
            name,
            arguments=args,
            progress_callback=gate,
            input_responses=responses,
            request_state=state,
            meta=cast("types.RequestParamsMeta | None", meta),
            allow_input_required=True,
        )

    first = await again(None, None)
    return await resolve_input_required(session, first, again)


async def task_call(
    session: ClientSession,
    name: str,
    args: dict[str, Any] | None,
    gate: ProgressGate,
    max_wait: float | None,
) -> types.CallToolResult:
    """Call ``name`` as a task and wait (up to ``max_wait``) for its result; each new status
    goes to ``gate`` as a progress report (a count, no total, the status as message)."""
    seen = 0

    async def status(info: TaskStatusInfo) -> None:
        nonlocal seen
        seen += 1
        said = f": {info.status_message}" if info.status_message else ""
        await gate(seen, None, f"task {info.status}{said}")

    return await call_tool_as_task(session, name, args, max_wait=max_wait, on_status=status)
