"""The ``glove-mcp`` command's log lines: in the command's words, each said once, never
drawn over the activity indicator.

The libraries log for library users (``WARNING glove_mcp.auth: …``, advice naming keyword
arguments). On the terminal a line reads ``warning: …`` with that advice in flags and
commands (``_cli_errors.in_flags``); a line already shown is not shown again (a warning that
each message of a conversation would repeat is said once); the indicator is erased before
the line and drawn again after it. ``--debug`` keeps the libraries' own format, everything;
so does ``serve``, whose log is a server's log.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TextIO

from glove_mcp.cli._log_redaction import redact_handlers
from glove_mcp.cli.errors import in_flags
from glove_mcp.cli.progress import live_indicators

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse

__all__ = ["TerminalLogHandler", "log_to_terminal"]

_UNOFFERED = "which no tool source offers"


class TerminalLogHandler(logging.Handler):
    """Writes each record once, in the command's words, with the indicator out of the way.

    Args:
        args: the command's arguments (the advice keeps its ``--catalogue`` and store flags).
        stream: where lines go (stderr).
    """

    def __init__(self, args: argparse.Namespace | None, stream: TextIO | None = None) -> None:
        super().__init__()  # the loggers' levels decide what comes here
        self._args = args
        self._stream = stream
        self._said: set[str] = set()
        self._unoffered: set[object] = set()
        self._said_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self._line(record)
            if line is None:
                return
            stream = self._stream if self._stream is not None else sys.stderr
            indicators = live_indicators()
            for indicator in indicators:
                indicator.pause()
            try:
                stream.write(line + "\n")
                stream.flush()
            finally:
                for indicator in indicators:
                    indicator.resume()
        except Exception:
            self.handleError(record)

    def _line(self, record: logging.LogRecord) -> str | None:
        message = record.getMessage()
        if record.name == "glove_core._deferral" and _UNOFFERED in message:
            # One per tool of a server that is not loaded now (its failure to load was said
            # already), on every request: one line per conversation says it all.
            conversation = record.args[0] if isinstance(record.args, tuple) else None
            with self._said_lock:
                if conversation in self._unoffered:
                    return None
                self._unoffered.add(conversation)
            message = (
                "the conversation's history uses tools of servers that are not loaded now; "
                "the agent carries on without them until their server is active again"
            )
        level = record.levelname.lower()
        line = f"{level}: {in_flags(message, self._args)}"
        if record.exc_info and record.levelno >= logging.ERROR:
            exc = record.exc_info[1]
            line += f" ({type(exc).__name__}; rerun with --debug for the traceback)"
        with self._said_lock:
            if line in self._said:
                return None
            self._said.add(line)
        return line


def log_to_terminal(args: argparse.Namespace) -> None:
    """Set up the command's logging: warnings through a ``TerminalLogHandler`` on stderr;
    ``--debug`` (everything) and ``serve`` (a server's log, which operators grep) in the
    libraries' format."""
    debug = args.debug
    if debug or args.command == "serve":
        logging.basicConfig(
            level=logging.DEBUG if debug else logging.WARNING,
            format="%(levelname)s %(name)s: %(message)s",
        )
    else:
        root = logging.getLogger()
        root.addHandler(TerminalLogHandler(args))
        root.setLevel(logging.WARNING)
    redact_handlers()  # credentials in URLs, whoever logs them
    if not debug:
        # The SDK logs its own failures with tracebacks (an OAuth flow error, a server's
        # unreadable answer) before raising them, and a login it abandons can leave a task
        # whose failure asyncio reports at exit; glove turns the failure into one line, so
        # the terminal shows that line only (--debug shows everything).
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
