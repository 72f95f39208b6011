"""Coalescing repeated requests for the same work: at most one run in flight per key and one
more pending, however many requests arrive (a server that sends 400 ``tools/list_changed``
notifications gets its tools listed two or three times, not 400)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable

__all__ = ["Coalescer"]


class Coalescer:
    """Runs ``work`` for a key at once, and once more after it if asked again meanwhile.

    A request that arrives while a run is in flight only marks the key pending and returns.
    When the run ends with the key pending, one more round starts once the requests have
    been quiet for ``quiet`` seconds (or ``max_wait`` seconds have passed, so a server that
    never stops still gets served); that round sees every change made before it began.
    Requests are never queued: a hundred pending requests are one round.

    Args:
        quiet: seconds without a new request before the pending round starts.
        max_wait: the most seconds a pending round waits for quiet.
    """

    def __init__(self, quiet: float = 0.1, max_wait: float = 5.0) -> None:
        self.quiet = quiet
        self.max_wait = max_wait
        self._running: set[Hashable] = set()
        self._pending: dict[Hashable, float] = {}  # key -> when it was last asked for
        self.rounds = 0
        """How many rounds ran (for tests and benchmarks)."""

    async def run(self, key: Hashable, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` for ``key`` now, or, if a run is in flight, make it run once more."""
        loop = asyncio.get_running_loop()
        if key in self._running:
            self._pending[key] = loop.time()
            return
        self._running.add(key)
        try:
            while True:
                self._pending.pop(key, None)
                self.rounds += 1
                await work()
                if key not in self._pending:
                    return
                deadline = loop.time() + self.max_wait
                while True:
                    # Until the requests have been quiet for ``quiet`` s (each one moves it).
                    wait = min(self._pending[key] + self.quiet, deadline) - loop.time()
                    if wait <= 0:
                        break
                    await asyncio.sleep(wait)
        finally:
            self._running.discard(key)
            self._pending.pop(key, None)
