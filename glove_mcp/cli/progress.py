"""A one-line activity indicator for the ``glove-mcp`` command's slow steps: connecting,
logging in, the model thinking, the API being retried.

Shown only on a terminal (never when the output is piped or is ``--json``), redrawn in place
on stderr, and erased before anything else is printed, so it never mixes with the command's
real output. It runs in a thread so that it keeps moving while the event loop or an import
is busy. ``NO_COLOR`` turns its colour off; ``TERM=dumb`` turns it off.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    from glove_core import RetryPolicy

__all__ = ["Progress", "color_wanted", "live_indicators", "retrying_policy"]

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ASCII_FRAMES = "-\\|/"
_INTERVAL = 0.1


_LIVE: weakref.WeakSet[Progress] = weakref.WeakSet()


def live_indicators() -> list[Progress]:
    """The indicators drawing on a terminal now: what a log line must pause first."""
    return [p for p in list(_LIVE) if p.active]


def color_wanted(stream: TextIO) -> bool:
    """Colour on ``stream``: a terminal, and ``NO_COLOR`` unset or empty (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    return _is_terminal(stream)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


class Progress:
    """An indicator on one terminal line.

    Args:
        stream: where it is drawn (stderr); nothing is drawn unless it is a terminal.
        enabled: False draws nothing whatever the stream (``--json``).
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self.active = enabled and _is_terminal(self._stream)
        self._color = self.active and color_wanted(self._stream)
        encoding = (getattr(self._stream, "encoding", None) or "").lower()
        self._frames = _FRAMES if "utf" in encoding else _ASCII_FRAMES
        self._lock = threading.Lock()
        self._text: str | None = None
        self._since = 0.0
        self._drawn = False
        self._paused = 0
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        if self.active:
            _LIVE.add(self)

    def show(self, text: str) -> None:
        """Show ``text`` (with a spinner and the seconds it has been shown) until ``clear``."""
        if not self.active:
            return
        with self._lock:
            if text != self._text:
                self._since = time.monotonic()
            self._text = text
            if not self._paused:
                self._draw(0)
        if self._thread is None:
            self._thread = threading.Thread(target=self._spin, name="glove-progress", daemon=True)
            self._thread.start()

    def clear(self) -> None:
        """Erase the indicator (before printing anything else)."""
        if not self.active:
            return
        with self._lock:
            self._text = None
            self._erase()

    def pause(self) -> None:
        """Erase the indicator and draw nothing until ``resume`` (a question is being asked:
        the spinner must not overwrite what the user types); what ``show`` asks meanwhile is
        drawn on ``resume``."""
        with self._lock:
            self._paused += 1
            self._erase()

    def resume(self) -> None:
        """Undo one ``pause``; the indicator comes back if one is wanted."""
        with self._lock:
            self._paused = max(0, self._paused - 1)
            if not self._paused and self._text is not None and self.active:
                self._draw(0)

    @contextmanager
    def step(self, text: str) -> Iterator[None]:
        """Show ``text`` while the block runs."""
        self.show(text)
        try:
            yield
        finally:
            self.clear()

    def close(self) -> None:
        """Erase the indicator and stop its thread."""
        self.clear()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(1)

    def _spin(self) -> None:
        tick = 0
        while not self._wake.wait(_INTERVAL):
            tick += 1
            with self._lock:
                if self._text is not None and not self._paused:
                    self._draw(tick)

    def _draw(self, tick: int) -> None:
        assert self._text is not None
        seconds = time.monotonic() - self._since
        timer = f" {seconds:.0f}s" if seconds >= 2 else ""
        line = f"{self._frames[tick % len(self._frames)]} {self._text}{timer}"
        if self._color:
            line = f"\x1b[2m{line}\x1b[0m"
        try:
            self._stream.write("\r\x1b[K" + line)
            self._stream.flush()
        except (OSError, ValueError):
            self.active = False
            return
        self._drawn = True

    def _erase(self) -> None:
        if not self._drawn:
            return
        try:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
        except (OSError, ValueError):
            self.active = False
        self._drawn = False


def retrying_policy(progress: Progress) -> RetryPolicy:
    """The model's default retry policy, with each wait shown on ``progress``: a model API
    that is overloaded or down is retried visibly, not in silence."""
    import asyncio

    from glove_core import RetryPolicy

    async def wait(seconds: float) -> None:
        progress.show(f"the model API did not answer; retrying in {seconds:.0f} s")
        await asyncio.sleep(seconds)
        progress.show("thinking…")

    return RetryPolicy(sleep=wait)
