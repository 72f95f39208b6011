"""Offline scripts for ``glove-mcp chat`` and ``serve --script`` (internal).

A plain script (``ScriptedModel.from_json``) plays its replies in order, from the start, for
each session a process opens. Several server instances sharing one database need more: a
session's requests land on any instance, and each instance opens the session afresh. A script
written ``{"from_history": true, "replies": [...]}`` therefore answers from the conversation
itself: a conversation's model call number N (the agent messages already in it) gets reply
``N`` modulo the number of replies, with tool-call ids ``script-N-<i>``, unique within the
conversation. Any instance, opened at any point of the conversation, then continues it the
same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glove_core import Message, ModelAdapter, ScriptedModel, ToolCall
from glove_core.abort import AbortSignal
from glove_core.models.base import ModelRequest, ModelResponse
from glove_core.subscribers import Notify
from glove_mcp._cli_errors import CliError

__all__ = ["HistoryScript", "load_script"]


def load_script(path: str) -> ModelAdapter:
    """The model a JSON script file describes (see the module docstring).

    Raises:
        CliError: the file cannot be read or has another shape (exit status 2).
    """
    try:
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read script {path!r}: {exc}", 2) from None
    try:
        if isinstance(data, dict) and data.get("from_history"):
            return HistoryScript(data.get("replies"), latency=float(data.get("latency", 0.0)))
        return ScriptedModel.from_json(data)
    except ValueError as exc:
        raise CliError(f"script {path!r}: {exc}", 2) from None


class HistoryScript:
    """A ``ModelAdapter`` answering each model call from the conversation's length.

    Args:
        replies: JSON replies as ``ScriptedModel.from_json`` reads them (a string, or
            ``{"text"?, "tool_calls": [{"name", "input"?}]}``).
        latency: seconds each reply waits.

    Raises:
        ValueError: no replies, or a reply of another shape.
    """

    def __init__(self, replies: Any, *, latency: float = 0.0) -> None:
        ScriptedModel.from_json(replies)  # the same shape checks, the same messages
        if not replies:
            raise ValueError("a from_history script needs at least one reply")
        self._replies: list[Any] = list(replies)
        self._latency = latency

    @property
    def name(self) -> str:
        """The adapter name reported in logs."""
        return "scripted"

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        """Answer with the reply for this conversation's next model call."""
        number = sum(1 for m in request.messages if m.sender == "agent")
        reply = self._replies[number % len(self._replies)]
        item: str | Message
        if isinstance(reply, str):
            item = reply
        else:
            calls = [
                ToolCall(id=f"script-{number}-{i}", name=c["name"], input=c.get("input", {}))
                for i, c in enumerate(reply.get("tool_calls", []))
            ]
            item = Message(
                sender="agent", text=str(reply.get("text", "")), tool_calls=calls or None
            )
        # One ScriptedModel call per reply: its announcements and usage, nothing kept.
        return await ScriptedModel([item], latency=self._latency).prompt(request, notify, signal)

    def __repr__(self) -> str:
        return f"HistoryScript(replies={len(self._replies)})"
