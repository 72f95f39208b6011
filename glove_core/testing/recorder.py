"""RecordingSubscriber: a subscriber that keeps every event, for tests."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, overload

from glove_core.subscribers import SubscriberEvent

__all__ = ["RecordingSubscriber"]

E = TypeVar("E")


class RecordingSubscriber:
    """Keeps every event it receives, in order.

    Select events by type (typed: ``recorder.of(EventInjected)`` is a
    ``list[EventInjected]``) or by ``kind`` (``recorder.of("event_injected")``).

    Example:
        >>> recorder = RecordingSubscriber()
        >>> glove.add_subscriber(recorder)  # doctest: +SKIP
        >>> [injected] = await recorder.wait_for(EventInjected)  # doctest: +SKIP
    """

    __test__ = False

    def __init__(self) -> None:
        self.events: list[SubscriberEvent] = []
        self._changed = asyncio.Event()

    async def record(self, event: SubscriberEvent) -> None:
        self.events.append(event)
        self._changed.set()

    def names(self) -> list[str]:
        """The events' kinds, in order."""
        return [event.kind for event in self.events]

    @overload
    def of(self, kind: type[E]) -> list[E]: ...

    @overload
    def of(self, kind: str) -> list[Any]: ...

    def of(self, kind: type[Any] | str) -> list[Any]:
        """The events of one type (a class) or one ``kind`` (a string), in order."""
        return self._matching(kind)

    def _matching(self, kind: type[Any] | str) -> list[Any]:
        if isinstance(kind, str):
            return [event for event in self.events if event.kind == kind]
        return [event for event in self.events if isinstance(event, kind)]

    @overload
    async def wait_for(self, kind: type[E], count: int = 1, within: float = 5.0) -> list[E]: ...

    @overload
    async def wait_for(self, kind: str, count: int = 1, within: float = 5.0) -> list[Any]: ...

    async def wait_for(
        self,
        kind: type[Any] | str,
        count: int = 1,
        within: float = 5.0,  # seconds; named so as not to shadow asyncio's timeout idiom
    ) -> list[Any]:
        """Wait until ``count`` events of ``kind`` (a class or a kind string) arrived; return
        them.

        Raises:
            TimeoutError: they did not arrive within ``within`` seconds.
        """
        async with asyncio.timeout(within):
            while len(found := self._matching(kind)) < count:
                self._changed.clear()
                await self._changed.wait()
        return found
