"""RecordingSubscriber: a subscriber that keeps every event, for tests."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["RecordingSubscriber"]


class RecordingSubscriber:
    """Keeps every ``(event_type, payload)`` it receives, in order.

    Example:
        >>> recorder = RecordingSubscriber()
        >>> glove.add_subscriber(recorder)  # doctest: +SKIP
        >>> await recorder.wait_for("event_injected")  # doctest: +SKIP
    """

    __test__ = False

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self._changed = asyncio.Event()

    async def record(self, event_type: str, data: Any) -> None:
        self.events.append((event_type, data))
        self._changed.set()

    def names(self) -> list[str]:
        """The event names, in order."""
        return [name for name, _ in self.events]

    def of(self, event_type: str) -> list[Any]:
        """The payloads of one event type, in order."""
        return [data for name, data in self.events if name == event_type]

    async def wait_for(
        self,
        event_type: str,
        count: int = 1,
        within: float = 5.0,  # seconds; named so as not to shadow asyncio's timeout idiom
    ) -> list[Any]:
        """Wait until ``count`` events of ``event_type`` arrived; return their payloads.

        Raises:
            TimeoutError: they did not arrive within ``within`` seconds.
        """
        async with asyncio.timeout(within):
            while len(found := self.of(event_type)) < count:
                self._changed.clear()
                await self._changed.wait()
        return found
