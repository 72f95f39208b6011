"""Answering an MCP server's elicitations in the terminal: a display listener that, for each
``mcp_elicitation`` slot, asks the user field by field (or shows the URL to open) and resolves
the slot with the answer.

Lines are read in a worker thread, so the event loop (the MCP session, the agent) keeps running
while the user types. One question is asked at a time.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from typing import Any, TextIO

from glove_core import DisplayManager, Slot
from glove_core.errors import SlotNotFoundError
from glove_mcp.cli.console import plain
from glove_mcp.connect.elicitation import ELICITATION_RENDERER
from glove_mcp.connect.elicitation_schema import (
    FormError,
    FormField,
    SchemaError,
    check_value,
    parse_form,
)

__all__ = ["ElicitationPrompter", "StopQuestion"]

_YES = frozenset({"y", "yes", "true", "1", "accept", "a"})
_NO = frozenset({"n", "no", "false", "0"})
_FORMAT_HINTS = {
    "email": "email address",
    "uri": "URL",
    "date": "date YYYY-MM-DD",
    "date-time": "date-time e.g. 2025-01-31T09:30:00Z",
}


class StopQuestion(Exception):
    """The user typed /decline or /cancel, or input ended."""

    def __init__(self, action: str) -> None:
        self.action = action
        super().__init__(action)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(plain(v) for v in value)
    return plain(value)


def _choice_text(f: FormField) -> str:
    return "; ".join(
        f"{i}) {plain(label)}" + ("" if label == value else f" [{plain(value)}]")
        for i, (value, label) in enumerate(f.choices, 1)
    )


def _describe(f: FormField) -> str:
    """What the prompt for ``f`` says about the value it wants."""
    if f.kind == "string":
        kind = _FORMAT_HINTS.get(f.format or "", "text")
        if f.min_length is not None or f.max_length is not None:
            kind += f", {f.min_length or 0}..{'' if f.max_length is None else f.max_length} chars"
    elif f.kind in ("number", "integer"):
        kind = "whole number" if f.kind == "integer" else "number"
        if f.minimum is not None or f.maximum is not None:
            low = "" if f.minimum is None else f.minimum
            high = "" if f.maximum is None else f.maximum
            kind += f", {low}..{high}"
    elif f.kind == "boolean":
        kind = "yes/no"
    elif f.kind == "choice":
        kind = f"one of: {_choice_text(f)}"
    else:
        kind = f"any of: {_choice_text(f)}; comma-separated"
    parts = [kind]
    if f.required:
        parts.append("required")
    if f.has_default and f.default is not None:
        parts.append(f"default {_shown(f.default)}")
    return ", ".join(parts)


def _pick(f: FormField, text: str) -> str:
    """A choice by value, label (any case) or number."""
    for value, label in f.choices:
        if text == value or text.casefold() == label.casefold():
            return value
    if text.isdigit() and 1 <= int(text) <= len(f.choices):
        return f.choices[int(text) - 1][0]
    raise FormError(f"pick one of {_choice_text(f)}")


def _convert(f: FormField, text: str) -> Any:
    """The typed value for what the user typed for ``f``.

    Raises:
        FormError: it does not convert or does not fit.
    """
    value: Any = text
    if f.kind == "integer":
        try:
            value = int(text)
        except ValueError:
            raise FormError("type a whole number, e.g. 42") from None
    elif f.kind == "number":
        try:
            value = int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
        except ValueError:
            raise FormError("type a number, e.g. 3.5") from None
    elif f.kind == "boolean":
        if text.lower() not in _YES | _NO:
            raise FormError("answer yes or no")
        value = text.lower() in _YES
    elif f.kind == "choice":
        value = _pick(f, text)
    elif f.kind == "choices":
        value = [_pick(f, part.strip()) for part in text.split(",") if part.strip()]
    return check_value(f, value)


class ElicitationPrompter:
    """Answers ``mcp_elicitation`` slots of ``display`` from the terminal.

    Args:
        display: the display manager the agent's MCP servers ask through.
        out: where questions are written.
        read_line: reads one line (blocking; it runs in a worker thread); ``""`` means the
            input ended, which cancels the question.
        before: called before a question is written (e.g. to end a streamed line).
        after: called once the question is answered (e.g. to bring the spinner back).
        interactive: False when nobody can answer (stdin is no terminal): every question is
            refused at once with one line saying so, nothing is read.
    """

    renderers: frozenset[str] = frozenset({ELICITATION_RENDERER})
    """The display slots answered."""

    def __init__(
        self,
        display: DisplayManager,
        out: TextIO,
        read_line: Callable[[], str] = sys.stdin.readline,
        *,
        before: Callable[[], None] | None = None,
        after: Callable[[], None] | None = None,
        interactive: bool = True,
    ) -> None:
        self._display = display
        self._out = out
        self._read_line = read_line
        self._before = before
        self._after = after
        self._interactive = interactive
        self._seen: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._turn = asyncio.Lock()

    def attach(self) -> Callable[[], None]:
        """Start answering new slots; returns the function that stops it."""
        return self._display.subscribe(self._changed)

    async def drain(self) -> None:
        """Wait until every question asked so far has been answered (or given up)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _changed(self, slots: list[Slot]) -> None:
        waiting = {s.id for s in slots}
        self._seen &= waiting  # forget answered slots, so the set does not grow
        for slot in slots:
            if not self._answers(slot) or slot.id in self._seen:
                continue
            self._seen.add(slot.id)
            task = asyncio.get_running_loop().create_task(self._answer(slot))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _answers(self, slot: Slot) -> bool:
        """Whether this terminal answers ``slot`` (its renderer is one of ``renderers``)."""
        return slot.renderer in self.renderers

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _waiting(self, slot: Slot) -> bool:
        return any(s.id == slot.id for s in self._display.slots)

    async def _line(self, prompt: str) -> str:
        self._write(prompt)
        line = await asyncio.to_thread(self._read_line)
        if not line:
            self._write("\n")
            raise StopQuestion("cancel")
        text = line.strip()
        if text in ("/decline", "/cancel"):
            raise StopQuestion(text[1:])
        return text

    async def _answer(self, slot: Slot) -> None:
        async with self._turn:
            if not self._waiting(slot):
                return  # answered or given up while an earlier question was open
            if self._before is not None:
                self._before()
            try:
                self._write(await self._settle(slot))
            finally:
                if self._after is not None:
                    self._after()

    async def _settle(self, slot: Slot) -> str:
        """Ask (or refuse) and resolve ``slot``; returns the line saying what was sent."""
        if self._interactive:
            answer, said = await self._ask(slot)
        else:
            answer, said = self._refuse(slot)
        gone = "(the server stopped waiting for this answer; it was not sent)\n"
        if not self._waiting(slot):
            return gone
        try:
            self._display.resolve(slot.id, answer)
        except SlotNotFoundError:
            return gone
        return said

    async def _ask(self, slot: Slot) -> tuple[Any, str]:
        """Ask the question of ``slot``; returns the answer and the line saying what was sent."""
        request: dict[str, Any] = slot.input if isinstance(slot.input, dict) else {}
        try:
            if request.get("mode") == "url":
                answer = await self._ask_url(request)
            else:
                answer = await self._ask_form(request)
        except StopQuestion as stop:
            answer = {"action": stop.action}
        return answer, f"({answer['action']} sent to {plain(request.get('server', '?'))})\n"

    def _refuse(self, slot: Slot) -> tuple[Any, str]:
        """The answer when nobody can be asked, and the one line saying so."""
        request: dict[str, Any] = slot.input if isinstance(slot.input, dict) else {}
        server = plain(request.get("server", "?"))
        return (
            {"action": "decline"},
            f"[{server}] asked for input; declined: stdin is not a terminal, so nobody can "
            "answer\n",
        )

    async def _ask_url(self, request: dict[str, Any]) -> dict[str, Any]:
        server = plain(request.get("server", "?"))
        self._write(
            f"\n[{server}] asks you to open a page: {plain(request.get('message', ''))}\n"
            f"  {plain(request.get('url', ''))}\n"
            f"  host: {plain(request.get('host', '?'))}\n"
        )
        while True:
            text = (
                await self._line("  opened it? accept (y) / decline (n) / cancel (c): ")
            ).lower()
            if text in ("y", "yes", "accept", "a"):
                return {"action": "accept"}
            if text in ("n", "no", "decline", "d"):
                return {"action": "decline"}
            if text in ("c", "cancel"):
                return {"action": "cancel"}

    async def _ask_form(self, request: dict[str, Any]) -> dict[str, Any]:
        server = plain(request.get("server", "?"))
        self._write(f"\n[{server}] asks: {plain(request.get('message', ''))}\n")
        if request.get("error"):
            self._write(f"  (the last answer did not fit: {plain(request['error'])})\n")
        try:
            fields = parse_form(request.get("requested_schema"))
        except SchemaError as exc:
            self._write(f"  cannot show this form ({plain(exc)}); declining\n")
            return {"action": "decline"}
        self._write("  (empty input takes the default; /decline or /cancel to stop)\n")
        content: dict[str, Any] = {}
        for f in fields:
            value = await self._ask_field(f)
            if value is not None:
                content[f.name] = value
        return {"action": "accept", "content": content}

    async def _ask_field(self, f: FormField) -> Any:
        about = f" — {plain(f.description)}" if f.description else ""
        prompt = f"  {plain(f.label)}{about} ({_describe(f)}): "
        while True:
            text = await self._line(prompt)
            if not text:
                if f.has_default and f.default is not None:
                    return f.default
                if not f.required:
                    return None
                self._write("    a value is required\n")
                continue
            try:
                return _convert(f, text)
            except FormError as exc:
                self._write(f"    {plain(exc.problem)}\n")
