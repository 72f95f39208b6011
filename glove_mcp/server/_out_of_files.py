"""Telling "the process ran out of file descriptors" apart, and logging it once per interval.

Also: uvicorn's refusals at the connection cap, once per interval rather than once a request.

A server at its ``ulimit -n`` fails every request that opens a file or socket. Logging a
traceback for each would fill the disk in seconds (43 MB did, in a review) while the server
could do nothing else, so the headless server answers them ``503`` and logs one line per
``interval`` saying how many it refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import resource
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "OncePer",
    "descriptor_share",
    "out_of_files",
    "quiet_accept_errors",
    "quiet_refusals",
]

_NO_FILES = frozenset({errno.EMFILE, errno.ENFILE})


def out_of_files(exc: BaseException) -> bool:
    """Whether ``exc`` comes from a file that could not be opened for want of descriptors.

    An ``OSError`` says so with its errno, anywhere in the cause chain. SQLite only says
    "unable to open database file" (``SQLITE_CANTOPEN``), also when the file itself became
    unreadable; on a database the server opened before, running out of descriptors is the
    usual cause, and both get the same answer: 503, and one log line naming both.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _NO_FILES:
            return True
        if isinstance(seen, sqlite3.Error) and seen.sqlite_errorcode == sqlite3.SQLITE_CANTOPEN:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def descriptor_share(divisor: int, low: int, high: int = 1000) -> int:
    """``ulimit -n`` / ``divisor``, between ``low`` and ``high`` (``high`` without a limit):
    the part of the process's file descriptors one use may take."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return high
    return max(low, min(high, soft // divisor))


class _Throttle:
    """Lets one line through per ``interval`` seconds and counts the ones it held back."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self._interval = interval
        self._clock = clock
        self._last: float | None = None
        self._held = 0

    def suffix(self) -> str | None:
        """None: hold this line back. Otherwise let it through with this suffix (the count of
        lines held back since the last one, or nothing)."""
        now = self._clock()
        if self._last is not None and now - self._last < self._interval:
            self._held += 1
            return None
        held, self._held, self._last = self._held, 0, now
        return f" ({held} more since the last such line)" if held else ""


class OncePer:
    """Logs a warning at most once per ``interval`` seconds, counting the ones it held back.

    Args:
        logger: where the line goes.
        interval: seconds between two lines.
        clock: the time source (seconds, monotonic).
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = 10.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._throttle = _Throttle(interval, clock)

    def warning(self, message: str) -> None:
        """Log ``message`` now, or count it when a line was logged less than ``interval`` ago."""
        suffix = self._throttle.suffix()
        if suffix is not None:
            self._logger.warning("%s%s", message, suffix)


@contextlib.contextmanager
def quiet_accept_errors(once: OncePer, message: str) -> Iterator[None]:
    """While in the block, the running loop reports "out of file descriptors" on ``accept()``
    through ``once`` instead of its own handler.

    asyncio (seen on 3.11) retries a failed ``accept()`` for the whole listen backlog — 2,048
    times under uvicorn — and logs a traceback for each, several thousand a second, for as long
    as the process has no descriptor free. Other loop errors go to the previous handler.
    """
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and out_of_files(exc) and "accept" in context["message"]:
            once.warning(message)
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    try:
        yield
    finally:
        loop.set_exception_handler(previous)


class _OncePerFilter(logging.Filter):
    """Lets a record with ``message`` through once per interval (a count rides on the next)."""

    def __init__(self, message: str, interval: float, clock: Callable[[], float]) -> None:
        super().__init__()
        self._message = message
        self._throttle = _Throttle(interval, clock)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() != self._message:
            return True
        suffix = self._throttle.suffix()
        if suffix is None:
            return False
        if suffix:
            record.msg = f"{self._message}{suffix}"
            record.args = None
        return True


@contextlib.contextmanager
def quiet_refusals(interval: float = 10.0) -> Iterator[None]:
    """While in the block, uvicorn's "Exceeded concurrency limit." (one line per request it
    answers 503 at ``--max-connections``) is logged once per ``interval`` seconds."""
    target = logging.getLogger("uvicorn.error")
    refusals = _OncePerFilter("Exceeded concurrency limit.", interval, time.monotonic)
    target.addFilter(refusals)
    try:
        yield
    finally:
        target.removeFilter(refusals)
