"""What the headless server's Server-Sent Events carry: subscriber events as SSE items (internal).

Both streams — a request's reply (``POST /sessions/{id}/messages``) and a session's follow
stream (``GET /sessions/{id}/events``) — send the same items:

- ``text_delta`` ``{"agent", "text"}``, ``tool_use`` ``{"agent", "id", "name", "input"}``,
  ``tool_result`` ``{"agent", "call_id", "name", "status", "data", "message"}``;
- ``subagent_started`` ``{"agent", "name", "call_id"}`` and ``subagent_finished``
  ``{"agent", "name", "call_id", "status"}`` around a subagent's own events.

``agent`` is ``"main"`` for the session's agent and the subagent's name (``find_capability``
for discovery) for what a subagent does, so a client can show its text apart. An ``error``
item is bounded (``error_data``): at most ``ERROR_PREVIEW_CHARS`` of the message, with its
full size and an id the server log's WARNING line for it names.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from glove_core.subagents import forwarding_subagent
from glove_core.subscribers import (
    SubagentCompleted,
    SubagentInvoked,
    SubscriberEvent,
    TextDelta,
    ToolUse,
    ToolUseResult,
)
from glove_core.types import new_id

__all__ = ["ERROR_PREVIEW_CHARS", "MAIN_AGENT", "SseItem", "error_data", "event_item", "frame"]

logger = logging.getLogger("glove_mcp.server")

MAIN_AGENT = "main"
"""The ``agent`` of the session's own agent's items."""

ERROR_PREVIEW_CHARS = 500
"""An ``error`` item carries at most this many characters of the message."""

_LOGGED_CHARS = 8000  # the server log keeps this much of a long error message

SseItem = tuple[str, dict[str, Any]]
"""An SSE event name and its JSON data."""


def frame(name: str, data: dict[str, Any], event_id: str | None = None) -> str:
    """One SSE frame (``id:`` first when given, so a reconnecting client can resume there)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, default=str)}\n\n"


def event_item(event: SubscriberEvent) -> SseItem | None:
    """The SSE item for a subscriber event, or None for kinds the streams leave out.

    Call it inside a subscriber's ``record``: that is where a subagent's events can be told
    from the agent's own.
    """
    sub = forwarding_subagent()
    agent = sub if sub is not None else MAIN_AGENT
    if isinstance(event, TextDelta):
        return "text_delta", {"agent": agent, "text": event.text}
    if isinstance(event, ToolUse):
        return "tool_use", {
            "agent": agent,
            "id": event.id,
            "name": event.name,
            "input": event.input,
        }
    if isinstance(event, ToolUseResult):
        result = event.result
        return "tool_result", {
            "agent": agent,
            "call_id": event.call_id,
            "name": event.name,
            "status": result.status,
            "data": result.data,
            "message": result.message,
        }
    if isinstance(event, SubagentInvoked):
        return "subagent_started", {"agent": agent, "name": event.name, "call_id": event.call_id}
    if isinstance(event, SubagentCompleted):
        return "subagent_finished", {
            "agent": agent,
            "name": event.name,
            "call_id": event.call_id,
            "status": event.status,
        }
    return None


def error_data(message: str, *, session_id: str) -> dict[str, Any]:
    """An ``error`` item's data: the message cut to ``ERROR_PREVIEW_CHARS``, its ``size`` in
    characters, ``truncated``, and an ``error_id`` that the server log line names (the log
    keeps up to 8,000 characters of it). A short message is sent whole."""
    error_id = new_id("err_")
    data: dict[str, Any] = {"error": message, "error_id": error_id, "size": len(message)}
    if len(message) > ERROR_PREVIEW_CHARS:
        data["error"] = message[:ERROR_PREVIEW_CHARS] + "…"
        data["truncated"] = True
    logger.warning(
        "a turn of session %r failed (%s, %d characters): %s",
        session_id,
        error_id,
        len(message),
        message[:_LOGGED_CHARS],
    )
    return data
