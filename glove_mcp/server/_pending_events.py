"""The server-wide cap on outside events waiting to be handled (internal).

Each session's event queue bounds its own pending events; this bounds them all together, so
one principal cannot park a queue's worth in each of many sessions. The count comes from the
database (every instance's events, in tables named ``glove_events``), read again at most once
per ``refresh`` seconds; events this instance accepted since the last read are added to it, so
a burst is held back before the next read.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

__all__ = ["PendingEvents"]


class PendingEvents:
    """Whether the server may take one more outside event.

    Args:
        count: reads how many events wait in the database.
        limit: the most that may wait (None: no limit).
        refresh: seconds a count is trusted.
    """

    def __init__(
        self,
        count: Callable[[], Awaitable[int]],
        limit: int | None,
        *,
        refresh: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self._count = count
        self._refresh = refresh
        self._clock = clock
        self._known = 0
        self._read_at: float | None = None
        self._since = 0

    async def full(self) -> int | None:
        """None when one more event fits; else the seconds to suggest in ``Retry-After``."""
        if self.limit is None:
            return None
        now = self._clock()
        if self._read_at is None or now - self._read_at >= self._refresh:
            self._known = await self._count()
            self._read_at, self._since = now, 0
        if self._known + self._since >= self.limit:
            return 5
        return None

    def added(self) -> None:
        """One event was accepted."""
        self._since += 1
