"""The JSON script of ``--script FILE``: replies an offline scripted model gives in turn.

The format (documented in the README)::

    ["a text reply",
     {"text": "optional words", "tool_calls": [{"name": "find_capability",
                                                "input": {"need": "bug tracker"}}]}]

or ``{"latency": SECONDS, "replies": [...]}`` to wait before each reply. The file is read and
checked in full when the command starts, so a mistake is one line naming the reply and the
field, not a failure at the first request.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from glove_core import ScriptedModel
from glove_mcp._cli_errors import CliError

__all__ = ["load_script", "read_script"]

_REPLY_FIELDS = frozenset({"text", "tool_calls"})
_CALL_FIELDS = frozenset({"name", "input"})
_SHAPE = 'a string, or {"text": "...", "tool_calls": [{"name": "...", "input": {...}}]}'


def read_script(path: str) -> dict[str, Any]:
    """The script at ``path`` as ``{"latency": s, "replies": [...]}``, checked.

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
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"latency", "replies"})
        if unknown:
            raise CliError(f"{where}: unknown field {unknown[0]!r} (use latency, replies)", 2)
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
    return {"latency": float(latency), "replies": data}


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


def load_script(path: str) -> ScriptedModel:
    """A ScriptedModel playing the script at ``path`` (checked by ``read_script``)."""
    return ScriptedModel.from_json(read_script(path))
