"""A stdio server's stderr: read through a pipe of our own instead of inherited by the
terminal, where a chatty server (a banner, a warning per request, a traceback per line it
printed to stdout) would interleave with the conversation.

Each line is cut at ``MAX_LINE_CHARS``, prefixed with the server id and logged at INFO to
``glove_mcp.stderr.<id>`` (the command shows INFO with ``--debug`` only); at most
``LINES_PER_SECOND`` lines a second after a burst of ``BURST_LINES``, and the lines dropped are
counted in the next line that passes. The last ``TAIL_LINES`` lines are kept: when the server
fails before its session is ready, they are logged at WARNING, so the terminal shows why.

A line a stdio server prints to stdout that is not JSON-RPC (a FastMCP server's "Loading
configuration…") makes the SDK log an ERROR with a pydantic traceback, per line. A filter on
the SDK's logger turns each into one INFO line on the same ``glove_mcp.stderr.<id>`` logger,
cut like a stderr line: the server is known from the session task that started it
(``stdio_server``, a context variable its reader task inherits).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import os
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = [
    "BURST_LINES",
    "LINES_PER_SECOND",
    "MAX_LINE_CHARS",
    "TAIL_LINES",
    "StderrCapture",
    "StdoutNoiseFilter",
    "stdio_server",
]

MAX_LINE_CHARS = 1_000
"""A stderr line is cut after this many characters."""
LINES_PER_SECOND = 20
"""Lines logged per second once the burst is spent."""
BURST_LINES = 100
"""Lines logged at once before the rate applies."""
TAIL_LINES = 20
"""Lines kept to show when the server fails to start."""
_CHUNK = 65_536
_DRAIN_SECONDS = 2.0
_SDK_STDIO_LOGGER = "mcp.client.stdio"
_SDK_PARSE_FAILURE = "Failed to parse JSONRPC message from server"
"""What the SDK (mcp 2.x ``mcp.client.stdio``) logs, with the traceback, for a stdout line
that is not JSON-RPC."""

stdio_server: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "glove_stdio_server", default=None
)
"""The id of the stdio server whose session runs in this task (and the tasks it starts)."""


def _cut(text: str) -> str:
    if len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS] + f"… [{len(text) - MAX_LINE_CHARS} more characters]"
    return text


class StdoutNoiseFilter(logging.Filter):
    """On the SDK's stdio logger: a stdout line that is not JSON-RPC becomes one INFO line
    ``[<id>] stdout, not JSON-RPC (ignored): <line>`` on ``glove_mcp.stderr.<id>``; the SDK's
    ERROR and traceback are dropped. Any other record passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != _SDK_PARSE_FAILURE or not record.exc_info:
            return True
        error = record.exc_info[1]
        line = str(error)
        errors = getattr(error, "errors", None)
        if callable(errors):
            try:
                first = errors()[0]
            except (IndexError, TypeError, ValueError):
                first = {}
            if isinstance(first, dict) and isinstance(first.get("input"), str):
                line = first["input"]
        server = stdio_server.get() or "?"
        logging.getLogger(f"glove_mcp.stderr.{server}").info(
            "[%s] stdout, not JSON-RPC (ignored): %s", server, _cut(line.rstrip("\r\n"))
        )
        return False


def _install_stdout_filter() -> None:
    sdk = logging.getLogger(_SDK_STDIO_LOGGER)
    if not any(isinstance(f, StdoutNoiseFilter) for f in sdk.filters):
        sdk.addFilter(StdoutNoiseFilter())


_install_stdout_filter()


class StderrCapture:
    """Give a stdio server's process a pipe as stderr (``errlog``) and log what arrives.

    Args:
        server: the server's id (the prefix and the logger name).
        started: whether the server's session became ready (on exit: a failure before that
            shows the last lines at WARNING).
    """

    def __init__(self, server: str, started: Callable[[], bool]) -> None:
        self.server = server
        self._started = started
        self._logger = logging.getLogger(f"glove_mcp.stderr.{server}")
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self.logged = 0
        self.dropped = 0
        self._tokens = float(BURST_LINES)
        self._last = 0.0
        self._reader: asyncio.Task[None] | None = None
        self.errlog: TextIO | None = None

    async def __aenter__(self) -> StderrCapture:
        read_fd, write_fd = os.pipe()
        self.errlog = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_CHUNK)
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        self._last = loop.time()
        self._reader = asyncio.create_task(self._read(reader), name=f"stderr:{self.server}")
        return self

    def pipe(self) -> TextIO:
        """The write end, for the process (valid until ``spawned()``)."""
        if self.errlog is None:
            raise RuntimeError("StderrCapture: enter it first, and spawn only once")
        return self.errlog

    def spawned(self) -> None:
        """The process has its copy of the pipe: close ours, so the reader sees the end of
        the stream when the process exits."""
        if self.errlog is not None:
            self.errlog.close()
            self.errlog = None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.spawned()
        if self._reader is not None:
            # The process has ended (or is ending): read what it wrote last, briefly.
            try:
                await asyncio.wait_for(asyncio.shield(self._reader), _DRAIN_SECONDS)
            except (TimeoutError, asyncio.CancelledError):
                self._reader.cancel()
        if exc is not None and not self._started() and self.tail:
            lines = "\n".join(f"  [{self.server}] {line}" for line in self.tail)
            self._logger.warning(
                "MCP server %r stopped before it was ready; its last stderr lines:\n%s",
                self.server,
                lines,
            )

    async def _read(self, reader: asyncio.StreamReader) -> None:
        pending = b""
        cut = False  # the current line was already cut: skip to its end
        while True:
            chunk = await reader.read(_CHUNK)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                if not cut:
                    self._line(raw)
                cut = False
            if len(pending) > MAX_LINE_CHARS * 4:
                if not cut:
                    self._line(pending)
                pending, cut = b"", True
        if pending and not cut:
            self._line(pending)
        if self.dropped:
            self._logger.info("[%s] (%d stderr lines dropped)", self.server, self.dropped)

    def _line(self, raw: bytes) -> None:
        text = _cut(raw.decode("utf-8", errors="replace").rstrip("\r"))
        self.tail.append(text)
        now = asyncio.get_running_loop().time()
        self._tokens = min(BURST_LINES, self._tokens + (now - self._last) * LINES_PER_SECOND)
        self._last = now
        if self._tokens < 1:
            self.dropped += 1
            return
        self._tokens -= 1
        self.logged += 1
        if self.dropped:
            self._logger.info("[%s] (%d stderr lines dropped)", self.server, self.dropped)
            self.dropped = 0
        self._logger.info("[%s] %s", self.server, text)
