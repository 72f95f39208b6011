"""Answering an MCP server's sampling request (``sampling/createMessage``) with a model adapter.

``answer_sampling`` is what a connection's ``sampling_callback`` calls once the server is
allowed to sample (that decision, per catalogue entry or mount option, is made before it). It
makes one separate model call that never touches a conversation: the server's system prompt
and messages, its ``tools`` (SEP-1577) and a token cap. In interactive mode a person may
approve the request first through the display manager (renderer ``"mcp_sampling"``). Each
outcome is published as an ``McpSampling`` event; nothing is raised into the SDK.

What a request may ask for, and what is honoured:

- ``messages``: text and images as they are; audio as placeholder text (no adapter sends
  audio); ``tool_use`` / ``tool_result`` blocks as tool calls and results.
- ``systemPrompt``: the model call's system prompt.
- ``maxTokens``: honoured, lowered to the cap (``max_tokens=``).
- ``tools``: offered to the model; names outside ``[A-Za-z0-9_-]{1,64}`` are made safe for the
  provider and mapped back in the reply.
- ``toolChoice``: ``auto`` as is; ``none`` offers no tools (tool blocks in the history are
  written as text, since providers refuse them without tools) and drops any tool call;
  ``required`` is asked for in the system prompt, as a model request cannot force it.
- Not honoured, logged at DEBUG: ``includeContext`` other than ``"none"`` (no context of other
  servers or conversations is ever attached), ``modelPreferences`` (the application chose the
  model), ``temperature``, ``stopSequences`` and ``metadata`` (a model request has no such
  settings).

Example:
    >>> async def on_sampling(context, params):
    ...     return await answer_sampling("notes", params, model=model, publish=glove.publish)
    >>> ClientSession(read, write, sampling_callback=on_sampling,
    ...               sampling_capabilities=SAMPLING_CAPABILITY)
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

from glove_core import (
    AbortError,
    AbortSignal,
    DisplayManager,
    GloveError,
    ModelAdapter,
    ModelRequest,
    ModelResponse,
)
from glove_core.subscribers import EventPayload
from glove_mcp.connect._sampling_convert import (
    ToolNames,
    approval_messages,
    reply_blocks,
    stop_reason,
    to_messages,
    tool_specs,
)
from glove_mcp.subscribers import McpSampling

__all__ = [
    "DEFAULT_SAMPLING_MAX_TOKENS",
    "SAMPLING_CAPABILITY",
    "SAMPLING_RENDERER",
    "USER_REJECTED",
    "SamplingAnswer",
    "answer_sampling",
]

logger = logging.getLogger(__name__)

DEFAULT_SAMPLING_MAX_TOKENS = 4096
"""The default cap on the tokens one sampling reply may have, whatever the server asks."""

SAMPLING_RENDERER = "mcp_sampling"
"""The display renderer of an approval slot.

Its input: ``server``, ``model`` (the adapter's name), ``system_prompt`` (str or None),
``messages`` (a list of ``{"role": "user"|"assistant", "text": str}``), ``max_tokens`` (after
the cap) and ``tools`` (the server's tool names). Resolve it with ``True``/``False`` or
``{"approved": bool}``; anything else, or ``reject()``, refuses.
"""

USER_REJECTED = -1
"""The error code the MCP specification gives a sampling request a person rejected."""

SAMPLING_CAPABILITY = types.SamplingCapability(tools=types.SamplingToolsCapability())
"""What to pass as ``ClientSession(sampling_capabilities=)``: sampling with tools (SEP-1577).
``includeContext`` is not declared, as it is not honoured."""

SamplingAnswer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData
"""What a sampling callback returns to the SDK."""

_REQUIRED_NOTE = "Answer by calling at least one of the tools you were given."


async def _ignore(event: EventPayload) -> None:
    # The model's streaming events belong to no conversation, so no subscriber sees them.
    return None


async def answer_sampling(
    server: str,
    params: types.CreateMessageRequestParams,
    *,
    model: ModelAdapter,
    max_tokens: int | None = DEFAULT_SAMPLING_MAX_TOKENS,
    approve: DisplayManager | None = None,
    publish: Callable[[McpSampling], Awaitable[None]] | None = None,
    signal: AbortSignal | None = None,
) -> SamplingAnswer:
    """Answer one ``sampling/createMessage`` request with a separate model call.

    Args:
        server: the catalogue id of the server asking (for the approval slot and events).
        params: the request's parameters, as the SDK's ``sampling_callback`` receives them.
        model: the model adapter that answers (the agent's own by default, chosen by the
            caller). The call is a one-off ``ModelRequest``, never part of a conversation.
        max_tokens: the cap on the reply; the model is asked for the smaller of this and the
            server's ``maxTokens``. None: the server's ``maxTokens`` alone.
        approve: a display manager to ask a person first (interactive mode), or None to answer
            without asking.
        publish: called with an ``McpSampling`` event for every outcome (e.g. ``Glove.publish``
            or a subscriber hub); a failing publisher is logged, never raised.
        signal: aborts the approval wait and the model call.

    Returns:
        A ``CreateMessageResult`` (text; the request had no ``tools`` or ``toolChoice``), a
        ``CreateMessageResultWithTools`` (text and ``tool_use`` blocks, ``stopReason``
        ``"toolUse"`` when the model called a tool), or ``ErrorData``: code ``-1`` when a person
        refused, ``-32602`` for a request that cannot be answered, ``-32603`` when the model
        failed or the call was aborted. Errors never carry the model's error text, which could
        hold provider details the server has no business seeing.
    """
    problem = _check_limits(params.max_tokens, max_tokens)
    if problem is not None:
        await _publish(publish, McpSampling(server=server, outcome="refused", detail=problem))
        return types.ErrorData(code=types.INVALID_PARAMS, message=problem)
    limit = params.max_tokens if max_tokens is None else min(params.max_tokens, max_tokens)
    _log_unhonoured(server, params)
    mode = params.tool_choice.mode if params.tool_choice is not None else None
    try:
        request, names = _build_request(server, params, limit, mode)
    except Exception as exc:
        logger.debug("cannot read the sampling request of %s", server, exc_info=True)
        detail = f"the sampling request could not be read ({type(exc).__name__})"
        await _publish(publish, McpSampling(server=server, outcome="refused", detail=detail))
        return types.ErrorData(code=types.INVALID_PARAMS, message=detail)

    if approve is not None:
        try:
            refusal = await _ask(approve, server, params, limit, model.name, signal)
        except AbortError:
            detail = "the sampling request was aborted before anyone approved it"
            await _publish(publish, McpSampling(server=server, outcome="failed", detail=detail))
            return types.ErrorData(code=types.INTERNAL_ERROR, message=detail)
        if refusal is not None:
            await _publish(publish, McpSampling(server=server, outcome="refused", detail=refusal))
            # The application's reason stays with the application.
            return types.ErrorData(code=USER_REJECTED, message="User rejected sampling request")

    try:
        if signal is not None:
            # Not every adapter looks at the signal before its call; none is made once aborted.
            signal.throw_if_aborted()
        response = await model.prompt(request, _ignore, signal)
    except AbortError:
        detail = "the sampling request was aborted"
        await _failed(publish, server, model.name, detail)
        return types.ErrorData(code=types.INTERNAL_ERROR, message=detail)
    except Exception as exc:
        # Only the class goes to the server; our own errors (secret-free by design) also reach
        # the application's subscribers in full.
        logger.warning(
            "the model %s failed to answer the sampling request of %s: %s",
            model.name,
            server,
            type(exc).__name__,
        )
        logger.debug("model failure detail", exc_info=True)
        message = f"the client's model could not answer the sampling request ({type(exc).__name__})"
        detail = f"{type(exc).__name__}: {exc}" if isinstance(exc, GloveError) else message
        await _failed(publish, server, model.name, detail)
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message)

    usage = response.usage
    await _publish(
        publish,
        McpSampling(
            server=server,
            outcome="answered",
            model=model.name,
            input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
        ),
    )
    # The server's SDK expects the array-capable result whenever it sent tools or toolChoice.
    with_tools = params.tools is not None or params.tool_choice is not None
    return _result(response, names, model.name, with_tools=with_tools, calls=mode != "none")


def _check_limits(requested: int, cap: int | None) -> str | None:
    if requested < 1:
        return f"maxTokens must be at least 1, got {requested}"
    if cap is not None and cap < 1:
        # A configuration mistake of the application, reported without raising into the SDK.
        logger.error("the sampling token cap must be at least 1 (or None), got %d", cap)
        return "the client's sampling token cap is misconfigured"
    return None


def _build_request(
    server: str, params: types.CreateMessageRequestParams, limit: int, mode: str | None
) -> tuple[ModelRequest, ToolNames]:
    tools = list(params.tools or []) if mode != "none" else []
    names = ToolNames(params.tools or [])
    system = params.system_prompt or ""
    if mode == "required" and tools:
        system = f"{system}\n\n{_REQUIRED_NOTE}" if system else _REQUIRED_NOTE
    request = ModelRequest(
        system=system,
        tools=tool_specs(tools, names),
        messages=to_messages(params.messages, names, tools_as_text=mode == "none"),
        conversation_id=f"mcp-sampling:{server}",
        max_tokens=limit,
    )
    return request, names


def _result(
    response: ModelResponse, names: ToolNames, model: str, *, with_tools: bool, calls: bool
) -> types.CreateMessageResult | types.CreateMessageResultWithTools:
    message = response.message
    if message.tool_calls and not (with_tools and calls):
        logger.debug("dropped %d tool call(s): no tools were offered", len(message.tool_calls))
        message = message.model_copy(update={"tool_calls": None})
    if not with_tools:
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text=message.text),
            model=model,
            stop_reason=stop_reason(response.stop_reason, called_tools=False),
        )
    blocks = reply_blocks(message, names)
    return types.CreateMessageResultWithTools(
        role="assistant",
        content=list(blocks),
        model=model,
        stop_reason=stop_reason(response.stop_reason, called_tools=bool(message.tool_calls)),
    )


async def _ask(
    display: DisplayManager,
    server: str,
    params: types.CreateMessageRequestParams,
    limit: int,
    model: str,
    signal: AbortSignal | None,
) -> str | None:
    """Ask a person; None when approved, else why not.

    Raises:
        AbortError: ``signal`` fired while waiting.
    """
    slot: dict[str, Any] = {
        "server": server,
        "model": model,
        "system_prompt": params.system_prompt,
        "messages": approval_messages(params.messages),
        "max_tokens": limit,
        "tools": [t.name for t in params.tools or []],
    }
    try:
        answer = await display.push_and_wait(SAMPLING_RENDERER, slot, signal=signal)
    except AbortError as exc:
        if signal is not None and signal.aborted:
            raise
        # ``reject(slot_id, reason)`` arrives as an AbortError carrying the reason.
        reason = "" if exc.reason in (None, "rejected") else f": {exc.reason}"
        return f"the user rejected the sampling request{reason}"
    except Exception as exc:
        # ``reject(slot_id, SomeError(...))``: still a refusal, never an error for the SDK.
        return f"the sampling request was rejected ({type(exc).__name__})"
    if answer is True or (isinstance(answer, dict) and answer.get("approved") is True):
        return None
    if answer is not False and not isinstance(answer, dict):
        logger.debug("an mcp_sampling slot was resolved with %r: taken as a refusal", answer)
    return "the user rejected the sampling request"


def _log_unhonoured(server: str, params: types.CreateMessageRequestParams) -> None:
    if params.include_context not in (None, "none"):
        logger.debug(
            "%s asked for includeContext=%r: not honoured, no other context is attached",
            server,
            params.include_context,
        )
    ignored = {
        "modelPreferences": params.model_preferences,
        "temperature": params.temperature,
        "stopSequences": params.stop_sequences,
        "metadata": params.metadata,
    }
    for name, value in ignored.items():
        if value is not None:
            logger.debug("%s sent %s=%r: not honoured", server, name, value)


async def _failed(
    publish: Callable[[McpSampling], Awaitable[None]] | None, server: str, model: str, detail: str
) -> None:
    await _publish(
        publish, McpSampling(server=server, outcome="failed", model=model, detail=detail)
    )


async def _publish(
    publish: Callable[[McpSampling], Awaitable[None]] | None, event: McpSampling
) -> None:
    if publish is None:
        return
    try:
        await publish(event)
    except Exception:
        # A broken subscriber must not turn an answered request into an error for the server.
        logger.warning("publishing an mcp_sampling event failed", exc_info=True)
