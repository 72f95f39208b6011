"""The terminal side of the ``glove-mcp`` command: streamed text, tool calls and results, and
the chat loop that reads the user's lines."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from glove_core import AbortController, AbortError, Glove, GloveError
from glove_core.subscribers import (
    SubagentCompleted,
    SubagentInvoked,
    SubscriberEvent,
    TextDelta,
    ToolUse,
    ToolUseResult,
)
from glove_mcp.cli.progress import Progress
from glove_mcp.connect.display_text import clean_text
from glove_mcp.subscribers import McpLog, McpProgress

_LOUD_LEVELS = frozenset({"warning", "error", "critical", "alert", "emergency"})

__all__ = ["PROMPT", "ConsolePrinter", "chat_loop", "plain", "shorten"]

PROMPT = "you> "
"""What the chat shows when it waits for a line."""


# Servers write much of what is shown (results, progress, logs, forms); escape sequences in
# it could rewrite the terminal, so control characters are dropped before printing.
def plain(text: Any) -> str:
    """``text`` without terminal control characters (newlines and tabs stay) and without
    format characters such as bidirectional overrides (``_display_text.clean_text``)."""
    return clean_text(text)


def shorten(value: Any, limit: int = 160) -> str:
    """One line of at most ``limit`` characters, without control characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(plain(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ConsolePrinter:
    """A subscriber that prints what the agent does as it happens.

    Args:
        out: where the agent's words, tool calls and results go.
        color: paint them (a terminal without ``NO_COLOR``).
        progress: the indicator shown while the model thinks or a tool runs; erased before
            each line.
    """

    def __init__(
        self, out: TextIO, *, color: bool = False, progress: Progress | None = None
    ) -> None:
        self._out = out
        self._color = color
        self._depth = 0
        self._mid_line = False
        self.progress = progress if progress is not None else Progress(enabled=False)

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self._color else text

    def _line(self, text: str) -> None:
        self.progress.clear()
        if self._mid_line:
            self._out.write("\n")
            self._mid_line = False
        self._out.write("  " * self._depth + text + "\n")
        self._out.flush()

    def note(self, text: str) -> None:
        """One line of the chat's own (``text`` is written as it is: clean what servers said
        with ``plain`` first), dimmed, on a line of its own."""
        self._line(self._paint(text, "2"))

    def end_turn(self) -> None:
        """Finish a streamed line, if one is open."""
        self.progress.clear()
        if self._mid_line:
            self._out.write("\n")
            self._mid_line = False
            self._out.flush()

    def pause(self) -> None:
        """Before a question: finish a streamed line and keep the indicator off the screen
        until ``resume``."""
        self.progress.pause()
        if self._mid_line:
            self._out.write("\n")
            self._mid_line = False
            self._out.flush()

    def resume(self) -> None:
        """After a question: the indicator comes back if something is still running."""
        self.progress.resume()

    async def record(self, event: SubscriberEvent) -> None:
        if isinstance(event, TextDelta):
            self.progress.clear()
            if not self._mid_line:
                prefix = "  " * self._depth + ("subagent: " if self._depth else "agent: ")
                self._out.write(self._paint(prefix, "1"))
                self._mid_line = True
            self._out.write(event.text)
            self._out.flush()
        elif isinstance(event, ToolUse):
            self._line(self._paint(f"→ {event.name}({shorten(event.input, 100)})", "36"))
            self.progress.show(f"running {shorten(event.name, 60)}…")
        elif isinstance(event, ToolUseResult):
            result = event.result
            if result.status == "success":
                self._line(self._paint(f"← {event.name}: {shorten(result.data)}", "32"))
            else:
                detail = shorten(result.message or result.data)
                self._line(self._paint(f"← {event.name} [{result.status}]: {detail}", "31"))
            self.progress.show("thinking…")
        elif isinstance(event, McpProgress):
            of = f"/{event.total:g}" if event.total is not None else ""
            said = f" {shorten(event.message, 80)}" if event.message else ""
            self._line(
                self._paint(f"  … {event.server} {event.tool}: {event.progress:g}{of}{said}", "2")
            )
        elif isinstance(event, McpLog) and event.level in _LOUD_LEVELS:
            self._line(self._paint(f"  [{event.server} {event.level}] {shorten(event.data)}", "33"))
        elif isinstance(event, SubagentInvoked):
            self._line(self._paint(f"┌ {event.name}: {shorten(event.prompt, 100)}", "35"))
            self._depth += 1
        elif isinstance(event, SubagentCompleted):
            self.end_turn()
            self._depth = max(0, self._depth - 1)
            self._line(self._paint(f"└ {event.name} finished ({event.status})", "35"))


async def chat_loop(
    glove: Glove,
    printer: ConsolePrinter,
    out: TextIO,
    command: Callable[[str], Awaitable[str | None]] | None = None,
    *,
    explain: Callable[[Exception], str] = str,
    first_line: str | None = None,
) -> None:
    """Read lines from stdin and send them to ``glove`` until ``/quit`` or end of input.

    ``command(line)`` sees every line first and returns the request to send (the line itself
    when it is no command), or None when it answered the line itself (``/prompts``).

    ``explain(error)`` words a failed request's error for the terminal.

    ``first_line``: a line already read at a prompt shown before (it is handled first).

    Ctrl-C aborts the request in progress (the conversation so far is kept); at the prompt it
    drops the line being typed and shows a fresh prompt, as a shell does. Ctrl-D (end of
    input) or ``/quit`` leaves.
    """
    loop = asyncio.get_running_loop()
    current: list[AbortController] = []
    hinted: list[bool] = []

    def interrupt() -> None:
        if current:
            current[0].abort("interrupted with Ctrl-C")
            return
        # The terminal discards the typed line itself on Ctrl-C; redraw the prompt.
        out.write("\n" if hinted else "\n(Ctrl-D or /quit to leave)\n")
        hinted.append(True)
        out.write(PROMPT)
        out.flush()

    installed = True
    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
    except (NotImplementedError, RuntimeError):
        installed = False  # not the main thread, or a platform without signal handlers
    try:
        while True:
            if first_line is not None:
                line, first_line = first_line, None
            else:
                out.write(PROMPT)
                out.flush()
                line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                out.write("\n")
                return
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                return
            if command is not None:
                request = await command(text)
                if request is None:
                    continue
                text = request
            controller = AbortController()
            current[:] = [controller]
            printer.progress.show("thinking…")
            try:
                await glove.process_request(text, signal=controller.signal)
            except AbortError:
                printer.end_turn()
                out.write("(aborted; the conversation is kept)\n")
            except GloveError as exc:
                printer.end_turn()
                out.write(f"error: {explain(exc)}\n")
            finally:
                current.clear()
            printer.end_turn()
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
