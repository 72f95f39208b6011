"""Running the tool calls of one model reply.

Whatever happens (unknown tool, bad input, permission denied, exception, abort), every call gets
exactly one ToolResult, so the saved history always pairs each tool_use with its result.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from glove_core.abort import AbortError, AbortSignal
from glove_core.context_items import current_tool_call
from glove_core.display import DisplayManager
from glove_core.result_limits import ResultLimits, bound_result
from glove_core.steps import INTERRUPTED_NOT_RUN, ToolStep, TurnSteps
from glove_core.stores.base import PermissionStore, StoreAdapter, has_capability
from glove_core.subscribers import Publish, ToolUseResult
from glove_core.tools import AgentHandle, Tool, ToolContext, ToolInputError, wrap_result
from glove_core.tracing import in_recording_span, record_tool, tool_span
from glove_core.types import ToolCall, ToolResult, ToolResultData

__all__ = ["ToolRunner", "execute_tool_calls", "interrupted_result", "run_for_application"]

logger = logging.getLogger(__name__)

_MAX_LISTED_TOOLS = 40


@dataclass(frozen=True, kw_only=True)
class ToolRunner:
    """What running a tool call needs."""

    agent: AgentHandle
    """Handed to every tool as ``ctx.glove``; the runner itself never reads it."""
    display: DisplayManager
    store: StoreAdapter
    """Remembers permission answers when it is a ``PermissionStore``."""
    publish: Publish
    subscribed: Callable[[], bool] = lambda: True
    """Whether anyone receives what ``publish`` sends: the result event is built only then."""
    max_retries: int
    limits: ResultLimits = field(default_factory=ResultLimits)
    """The bound every result is held to before it is published or saved."""


async def execute_tool_calls(
    runner: ToolRunner,
    tools: Mapping[str, Tool],
    calls: list[ToolCall],
    signal: AbortSignal,
    disabled: set[str] | frozenset[str] = frozenset(),
    steps: TurnSteps | None = None,
    traced: bool | None = None,
) -> list[ToolResult]:
    """Run ``calls`` (concurrently when every tool is parallel_safe) and return their results,
    in the order of the calls. Calls to tools in ``disabled`` are answered without running.
    With ``steps`` (a durable execution) each call runs as that execution's steps.
    ``traced`` says whether the current span records (the loop knows it for its whole
    request); None asks, once for all the calls."""
    if traced is None:
        traced = in_recording_span()
    parallel = len(calls) > 1 and all(
        (t := tools.get(c.name)) is not None and t.parallel_safe for c in calls
    )
    if steps is not None:
        return await steps.tool_calls(
            [_tool_step(runner, tools, c, signal, disabled) for c in calls], parallel=parallel
        )
    if parallel:
        # The first call runs in this task (as a sequential call does), the others in tasks of
        # their own, awaited in order rather than through ``asyncio.gather``: a call always ends
        # in a result, so gather's early exit on the first error is never needed, and its
        # gathering future, its callbacks and one task more were a fifth of the loop's time
        # with three quick calls per reply.
        first, *rest = calls
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(_run_call(runner, tools, c, signal, disabled, traced)) for c in rest
        ]
        try:
            results = [await _run_call(runner, tools, first, signal, disabled, traced)]
            results.extend([await task for task in tasks])
        except BaseException:
            for task in tasks:  # as gather does when it is cancelled or a call raises
                task.cancel()
            raise
        return results
    return [await _run_call(runner, tools, call, signal, disabled, traced) for call in calls]


def interrupted_result(call: ToolCall, reason: str) -> ToolResult:
    """The result recorded for a call that never finished."""
    return ToolResult(
        call_id=call.id,
        name=call.name,
        result=ToolResultData(status="aborted", message=reason),
    )


async def _run_call(
    runner: ToolRunner,
    tools: Mapping[str, Tool],
    call: ToolCall,
    signal: AbortSignal,
    disabled: set[str] | frozenset[str],
    traced: bool,
) -> ToolResult:
    tool, early = _check_call(tools, call, signal, disabled)
    if traced:
        with tool_span(call) as span:
            if early is None:
                assert tool is not None  # _check_call answers every call to an unknown tool
                early = await _run_known(runner, tool, call, signal)
            data, status = early
            if span is not None:
                record_tool(span, status, data.data)
    elif early is None:
        assert tool is not None
        data = (await _run_known(runner, tool, call, signal))[0]
    else:
        data = early[0]
    return await _finish(runner, call, data)


def _check_call(
    tools: Mapping[str, Tool],
    call: ToolCall,
    signal: AbortSignal,
    disabled: set[str] | frozenset[str],
) -> tuple[Tool | None, tuple[ToolResultData, str] | None]:
    """The tool to run, or the result of a call that must not run and why (a
    ``glove_core.tracing.TOOL_STATUS``)."""
    tool = tools.get(call.name)
    if tool is None:
        return None, (_error(_unknown_tool_message(call.name, list(tools))), "unknown_tool")
    if call.name in disabled:
        message = (
            f"tool_inactive: {call.name!r} is switched off in this conversation and was not "
            "run. Carry on without it, or ask the user whether it should be switched back on."
        )
        return None, (_error(message), "switched_off")
    if signal.aborted:
        aborted = ToolResultData(
            status="aborted", message="the request was aborted before this tool call started"
        )
        return None, (aborted, "aborted")
    return tool, None


async def _finish(runner: ToolRunner, call: ToolCall, data: ToolResultData) -> ToolResult:
    # Whatever the tool (or its exception) produced, nothing larger than the limits, nor media
    # a provider refuses, reaches subscribers, the store or the model.
    data = bound_result(data, runner.limits)
    result = ToolResult(call_id=call.id, name=call.name, result=data)
    if runner.subscribed():
        await runner.publish(ToolUseResult(call.id, call.name, dict(call.input), data))
    return result


def _tool_step(
    runner: ToolRunner,
    tools: Mapping[str, Tool],
    call: ToolCall,
    signal: AbortSignal,
    disabled: set[str] | frozenset[str],
) -> ToolStep:
    """One call as a durable execution runs it: what comes before the tool (checks, the
    person's permission) apart from the tool itself."""
    tool, early = _check_call(tools, call, signal, disabled)

    async def prepare() -> ToolResult | None:
        if tool is None:
            assert early is not None
            return await _finish(runner, call, early[0])
        parsed = _parse(tool, call)
        if isinstance(parsed, ToolResultData):
            return await _finish(runner, call, parsed)
        denied = await _permission(runner, tool, call, signal)
        return None if denied is None else await _finish(runner, call, denied)

    async def invoke() -> ToolResult:
        assert tool is not None
        parsed = _parse(tool, call)
        if isinstance(parsed, ToolResultData):
            return await _finish(runner, call, parsed)
        return await _finish(
            runner, call, await _invoke_retrying(runner, tool, call, parsed, signal)
        )

    async def interrupted() -> ToolResult:
        return await _finish(
            runner, call, ToolResultData(status="aborted", message=INTERRUPTED_NOT_RUN)
        )

    return ToolStep(
        call=call,
        idempotent=tool is None or tool.idempotent,
        prepare=prepare,
        invoke=invoke,
        interrupted=interrupted,
    )


def _parse(tool: Tool, call: ToolCall) -> Any:
    """The parsed input, or the error result for input that does not fit."""
    try:
        return tool.parse_input(call.input)
    except ToolInputError as exc:
        return _error(str(exc))


async def _permission(
    runner: ToolRunner,
    tool: Tool,
    call: ToolCall,
    signal: AbortSignal,
    requested_by: str | None = None,
) -> ToolResultData | None:
    """None when the tool may run, else the result that says why not. A call the application
    makes for ``requested_by`` (an app's view) always asks."""
    if not tool.requires_permission and requested_by is None:
        return None
    try:
        granted = await _ask_permission(runner, tool, call, signal, requested_by)
    except AbortError:
        return ToolResultData(
            status="aborted", message="aborted while waiting for the user's permission"
        )
    if granted:
        return None
    return _error(
        f"the user denied permission to run {tool.name!r} with this input. Do not retry "
        "the same call; ask the user how to proceed."
    )


async def run_for_application(
    runner: ToolRunner, tool: Tool, call: ToolCall, signal: AbortSignal, requested_by: str | None
) -> ToolResultData:
    """Run ``call`` for the application (not the model): with ``requested_by``, permission is
    always asked (or a remembered answer used) and the slot's input names it; without, only
    as the tool requires. The result is bounded like any other, neither published nor saved."""
    data, _ = await _run_known(runner, tool, call, signal, requested_by=requested_by)
    return bound_result(data, runner.limits)


async def _run_known(
    runner: ToolRunner,
    tool: Tool,
    call: ToolCall,
    signal: AbortSignal,
    *,
    requested_by: str | None = None,
) -> tuple[ToolResultData, str]:
    """The call's result, and how it ended."""
    # Every call of every model reply passes here: the common case (valid input, no
    # permission to ask) costs no call beyond validating and running the tool.
    try:
        parsed = tool.parse_input(call.input)
    except ToolInputError as exc:
        return _error(str(exc)), "error"
    if tool.requires_permission or requested_by is not None:
        refused = await _permission(runner, tool, call, signal, requested_by)
        if refused is not None:
            return refused, "aborted" if refused.status == "aborted" else "refused"
    data = await _invoke_retrying(runner, tool, call, parsed, signal)
    return data, data.status


async def _invoke_retrying(
    runner: ToolRunner, tool: Tool, call: ToolCall, parsed: Any, signal: AbortSignal
) -> ToolResultData:
    ctx = ToolContext(display=runner.display, glove=runner.agent, signal=signal, call_id=call.id)
    attempts = 0
    while True:
        attempts += 1
        try:
            if tool.un_abortable or not signal.can_fire:
                value = await _invoke(tool, parsed, ctx)
            else:
                value = await signal.race(_invoke(tool, parsed, ctx))
            return wrap_result(value)
        except AbortError as exc:
            reason = "the request was aborted while the tool ran" if signal.aborted else str(exc)
            return ToolResultData(status="aborted", message=reason)
        except Exception as exc:
            if attempts > runner.max_retries:
                logger.warning(
                    "tool %r failed %d time(s); giving up", tool.name, attempts, exc_info=True
                )
                return _error(
                    f"tool {tool.name!r} failed after {attempts} attempt(s): "
                    f"{type(exc).__name__}: {exc}"
                )
            logger.debug(
                "tool %r raised on attempt %d; retrying", tool.name, attempts, exc_info=True
            )


async def _invoke(tool: Tool, parsed: Any, ctx: ToolContext) -> Any:
    token = current_tool_call.set(ctx.call_id)
    try:
        result = tool.do(parsed, ctx)
        if inspect.isawaitable(result):
            result = await result
        return result
    finally:
        current_tool_call.reset(token)


async def _ask_permission(
    runner: ToolRunner,
    tool: Tool,
    call: ToolCall,
    signal: AbortSignal,
    requested_by: str | None = None,
) -> bool:
    store = runner.store
    memory = store if has_capability(store, PermissionStore) else None
    key = json.dumps(call.input, sort_keys=True, separators=(",", ":"), default=str)
    if memory is not None:
        known = await memory.get_permission(tool.name, key)
        if known is not None:
            return known == "granted"
    asked: dict[str, Any] = {
        "tool": tool.name,
        "description": tool.description,
        "input": call.input,
    }
    if requested_by is not None:
        asked["requested_by"] = requested_by
    answer = await runner.display.push_and_wait(
        "permission_request",
        asked,
        signal=signal,
        call_id=call.id,
    )
    # ``{"granted": bool, "remember": bool}`` answers once ("allow this time", a refusal
    # nobody chose); True and the strings below are remembered, as before.
    remember = True
    if isinstance(answer, dict):
        remember = answer.get("remember", True) is not False
        answer = answer.get("granted")
    granted = answer is True or (
        isinstance(answer, str) and answer.lower() in ("granted", "allow", "yes")
    )
    if memory is not None and remember:
        await memory.set_permission(tool.name, key, "granted" if granted else "denied")
    return granted


def _error(message: str) -> ToolResultData:
    return ToolResultData(status="error", message=message)


def _unknown_tool_message(name: str, available: list[str]) -> str:
    close = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listed = sorted(available)[:_MAX_LISTED_TOOLS]
    more = f" and {len(available) - len(listed)} more" if len(available) > len(listed) else ""
    names = ", ".join(listed) if listed else "none"
    return f"tool_unavailable: unknown tool {name!r}.{hint} Available tools: {names}{more}."
