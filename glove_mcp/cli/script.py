"""The JSON script of ``--script FILE``: replies an offline scripted model gives in turn.

The format (documented in the README)::

    ["a text reply",
     {"text": "optional words", "tool_calls": [{"name": "find_capability",
                                                "input": {"need": "bug tracker"}}]}]

or ``{"latency": SECONDS, "replies": [...]}`` to wait before each reply. The file is read and
checked in full when the command starts, so a mistake is one line naming the reply and the
field, not a failure at the first request.

A plain script plays its replies in order, from the start, for each session a process opens.
Several server instances sharing one database need more: a session's requests land on any
instance, and each instance opens the session afresh. ``{"from_history": true, "replies":
[...]}`` therefore answers from the conversation itself: its model call number N (the agent
messages already in it) gets reply N modulo the number of replies, with tool-call ids
``script-N-<i>``, unique within the conversation, so any instance continues it the same way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from glove_core import Message, ModelAdapter, ScriptedModel, ToolCall
from glove_core.abort import AbortSignal
from glove_core.models.base import ModelRequest, ModelResponse
from glove_core.subscribers import Notify
from glove_mcp.cli.errors import CliError

__all__ = ["HistoryScript", "load_script", "read_script", "script_model"]

_REPLY_FIELDS = frozenset({"text", "tool_calls"})
_CALL_FIELDS = frozenset({"name", "input"})
_SHAPE = 'a string, or {"text": "...", "tool_calls": [{"name": "...", "input": {...}}]}'


def read_script(path: str) -> dict[str, Any]:
    """The script at ``path`` as ``{"latency": s, "replies": [...], "from_history": b}``,
    checked.

    Raises:
        CliError: (status 2) the file is missing, not JSON, or not a script; the message names
            the reply and what is wrong with it.
    """
    where = f"script {path!r}"
    try:
        data: Any = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(f"cannot read {where}: no such file", 2) from None
    except OSError as exc:
        raise CliError(f"cannot read {where}: {exc.strerror or exc}", 2) from None
    except UnicodeDecodeError:
        raise CliError(f"cannot read {where}: not UTF-8 text", 2) from None
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{where} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", 2
        ) from None
    latency: Any = 0.0
    from_history = False
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"latency", "replies", "from_history"})
        if unknown:
            raise CliError(
                f"{where}: unknown field {unknown[0]!r} (use latency, replies, from_history)", 2
            )
        from_history = data.get("from_history", False)
        if not isinstance(from_history, bool):
            raise CliError(f"{where}: from_history must be true or false", 2)
        latency = data.get("latency", 0.0)
        if (
            not isinstance(latency, int | float)
            or isinstance(latency, bool)
            or not 0 <= latency < math.inf
        ):
            raise CliError(f"{where}: latency must be a number of seconds, 0 or more", 2)
        data = data.get("replies")
    if not isinstance(data, list) or not data:
        raise CliError(
            f'{where}: expected a JSON list of replies (or {{"replies": [...]}}), each {_SHAPE}',
            2,
        )
    for number, reply in enumerate(data, start=1):
        problem = _reply_problem(reply)
        if problem:
            raise CliError(f"{where}: reply #{number}: {problem}", 2)
    return {"latency": float(latency), "replies": data, "from_history": from_history}


def _reply_problem(reply: Any) -> str | None:
    if isinstance(reply, str):
        return None
    if not isinstance(reply, dict):
        return f"expected {_SHAPE}, got {type(reply).__name__}"
    unknown = sorted(set(reply) - _REPLY_FIELDS)
    if unknown:
        return f"unknown field {unknown[0]!r} (a reply has text and tool_calls)"
    if not isinstance(reply.get("text", ""), str):
        return "text must be a string"
    calls = reply.get("tool_calls", [])
    if not isinstance(calls, list):
        return "tool_calls must be a list"
    if not calls and not reply.get("text"):
        return "a reply needs text or tool_calls"
    for index, call in enumerate(calls, start=1):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            return f"tool call #{index} needs a name (a string)"
        unknown = sorted(set(call) - _CALL_FIELDS)
        if unknown:
            return f"tool call #{index}: unknown field {unknown[0]!r} (use name, input)"
        if not isinstance(call.get("input", {}), dict):
            return f"tool call #{index}: input must be a JSON object"
    return None


def script_model(script: dict[str, Any]) -> ModelAdapter:
    """The model a script checked by ``read_script`` describes (a fresh one per session)."""
    if script["from_history"]:
        return HistoryScript(script["replies"], latency=script["latency"])
    return ScriptedModel.from_json({"latency": script["latency"], "replies": script["replies"]})


def load_script(path: str) -> ModelAdapter:
    """The model the script at ``path`` describes (checked by ``read_script``)."""
    return script_model(read_script(path))


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
