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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from glove_core.abort import AbortError, AbortSignal
from glove_core.context_items import current_tool_call
from glove_core.display import DisplayManager
from glove_core.result_limits import ResultLimits, bound_result
from glove_core.stores.base import PermissionStore, StoreAdapter
from glove_core.subscribers import Publish, ToolUseResult
from glove_core.tools import AgentHandle, Tool, ToolContext, ToolInputError, wrap_result
from glove_core.tracing import in_recording_span, record_tool, tool_span
from glove_core.types import ToolCall, ToolResult, ToolResultData

__all__ = ["ToolRunner", "execute_tool_calls", "interrupted_result"]

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
    max_retries: int
    limits: ResultLimits = field(default_factory=ResultLimits)
    """The bound every result is held to before it is published or saved."""


async def execute_tool_calls(
    runner: ToolRunner,
    tools: Mapping[str, Tool],
    calls: list[ToolCall],
    signal: AbortSignal,
    disabled: set[str] | frozenset[str] = frozenset(),
    traced: bool | None = None,
) -> list[ToolResult]:
    """Run ``calls`` (concurrently when every tool is parallel_safe) and return their results,
    in the order of the calls. Calls to tools in ``disabled`` are answered without running.
    ``traced`` says whether the current span records (the loop knows it for its whole
    request); None asks, once for all the calls."""
    if traced is None:
        traced = in_recording_span()
    if len(calls) > 1 and all(
        (t := tools.get(c.name)) is not None and t.parallel_safe for c in calls
    ):
        return list(
            await asyncio.gather(
                *(_run_call(runner, tools, c, signal, disabled, traced) for c in calls)
            )
        )
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
    tool = tools.get(call.name)
    early = _not_run(tool, call, tools, signal, disabled)
    if traced:
        with tool_span(call) as span:
            if early is None:
                assert tool is not None  # _not_run answers every call to an unknown tool
                early = await _run_known(runner, tool, call, signal)
            data, status = early
            if span is not None:
                record_tool(span, status, data.data)
    elif early is None:
        assert tool is not None
        data = (await _run_known(runner, tool, call, signal))[0]
    else:
        data = early[0]
    # Whatever the tool (or its exception) produced, nothing larger than the limits, nor media
    # a provider refuses, reaches subscribers, the store or the model.
    data = bound_result(data, runner.limits)
    result = ToolResult(call_id=call.id, name=call.name, result=data)
    await runner.publish(ToolUseResult(call.id, call.name, dict(call.input), data))
    return result


def _not_run(
    tool: Tool | None,
    call: ToolCall,
    tools: Mapping[str, Tool],
    signal: AbortSignal,
    disabled: set[str] | frozenset[str],
) -> tuple[ToolResultData, str] | None:
    """The answer to a call that is not run, and why (a ``glove_core.tracing.TOOL_STATUS``);
    None when ``tool`` runs."""
    if tool is None:
        return _error(_unknown_tool_message(call.name, list(tools))), "unknown_tool"
    if call.name in disabled:
        message = (
            f"tool_inactive: {call.name!r} is switched off in this conversation and was not "
            "run. Carry on without it, or ask the user whether it should be switched back on."
        )
        return _error(message), "switched_off"
    if signal.aborted:
        return ToolResultData(
            status="aborted", message="the request was aborted before this tool call started"
        ), "aborted"
    return None


async def _run_known(
    runner: ToolRunner, tool: Tool, call: ToolCall, signal: AbortSignal
) -> tuple[ToolResultData, str]:
    """The call's result, and how it ended."""
    try:
        parsed = tool.parse_input(call.input)
    except ToolInputError as exc:
        return _error(str(exc)), "error"
    ctx = ToolContext(display=runner.display, glove=runner.agent, signal=signal, call_id=call.id)
    if tool.requires_permission:
        try:
            granted = await _ask_permission(runner, tool, call, signal)
        except AbortError:
            return ToolResultData(
                status="aborted", message="aborted while waiting for the user's permission"
            ), "aborted"
        if not granted:
            return _error(
                f"the user denied permission to run {tool.name!r} with this input. Do not retry "
                "the same call; ask the user how to proceed."
            ), "refused"
    attempts = 0
    while True:
        attempts += 1
        try:
            if tool.un_abortable:
                value = await _invoke(tool, parsed, ctx)
            else:
                value = await signal.race(_invoke(tool, parsed, ctx))
            data = wrap_result(value)
            return data, data.status
        except AbortError as exc:
            reason = "the request was aborted while the tool ran" if signal.aborted else str(exc)
            return ToolResultData(status="aborted", message=reason), "aborted"
        except Exception as exc:
            if attempts > runner.max_retries:
                logger.warning(
                    "tool %r failed %d time(s); giving up", tool.name, attempts, exc_info=True
                )
                return _error(
                    f"tool {tool.name!r} failed after {attempts} attempt(s): "
                    f"{type(exc).__name__}: {exc}"
                ), "error"
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
    runner: ToolRunner, tool: Tool, call: ToolCall, signal: AbortSignal
) -> bool:
    store = runner.store
    memory = store if isinstance(store, PermissionStore) else None
    key = json.dumps(call.input, sort_keys=True, separators=(",", ":"), default=str)
    if memory is not None:
        known = await memory.get_permission(tool.name, key)
        if known is not None:
            return known == "granted"
    answer = await runner.display.push_and_wait(
        "permission_request",
        {"tool": tool.name, "description": tool.description, "input": call.input},
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
