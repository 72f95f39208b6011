"""The display stack: slots that tools push for the application's UI to show.

``push_and_forget`` shows something and moves on; ``push_and_wait`` suspends the tool until the
application calls ``resolve(slot_id, value)`` or ``reject(slot_id, error)``. The future is
registered *before* listeners are told about the slot, so a listener may resolve it on the spot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from glove_core.abort import AbortError, AbortSignal
from glove_core.errors import SlotNotFoundError
from glove_core.types import new_id

__all__ = ["DisplayManager", "Slot", "SlotListener"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Slot:
    """One item on the display stack."""

    id: str
    renderer: str
    input: Any
    kind: Literal["wait", "forget"]
    call_id: str | None = field(default=None)


SlotListener = Callable[[list[Slot]], None]
"""Called with the current slots whenever the stack changes."""


class DisplayManager:
    """Holds the slots tools pushed and the futures of those awaiting an answer."""

    def __init__(self) -> None:
        self._slots: dict[str, Slot] = {}
        self._waiters: dict[str, asyncio.Future[Any]] = {}
        self._listeners: list[SlotListener] = []

    @property
    def slots(self) -> list[Slot]:
        """The slots currently shown, oldest first."""
        return list(self._slots.values())

    def subscribe(self, listener: SlotListener) -> Callable[[], None]:
        """Call ``listener(slots)`` on every change.

        Returns:
            A function that unsubscribes the listener.
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def push_and_forget(
        self, renderer: str, input: Any = None, *, call_id: str | None = None
    ) -> str:
        """Show a slot and return its id at once.

        The slot stays until ``remove(slot_id)`` or ``clear()``.
        """
        slot = Slot(
            id=new_id("slot_"), renderer=renderer, input=input, kind="forget", call_id=call_id
        )
        self._slots[slot.id] = slot
        self._notify()
        return slot.id

    async def push_and_wait(
        self,
        renderer: str,
        input: Any = None,
        *,
        signal: AbortSignal | None = None,
        call_id: str | None = None,
    ) -> Any:
        """Show a slot and wait until the application resolves or rejects it.

        Returns:
            The value given to ``resolve``.

        Raises:
            AbortError: ``signal`` fired first (the slot is removed).
            Exception: whatever was given to ``reject``.
        """
        slot = Slot(
            id=new_id("slot_"), renderer=renderer, input=input, kind="wait", call_id=call_id
        )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        # Register before notifying: a listener may resolve synchronously.
        self._waiters[slot.id] = future
        self._slots[slot.id] = slot
        self._notify()
        try:
            if signal is None:
                return await future
            return await signal.race(future)
        finally:
            self._waiters.pop(slot.id, None)
            if self._slots.pop(slot.id, None) is not None:
                self._notify()

    def resolve(self, slot_id: str, value: Any = None) -> None:
        """Answer a ``push_and_wait`` slot.

        Raises:
            SlotNotFoundError: no slot with that id is waiting.
        """
        self._settle(slot_id).set_result(value)

    def reject(self, slot_id: str, error: BaseException | str | None = None) -> None:
        """Fail a ``push_and_wait`` slot; the waiting tool sees ``error`` raised.

        A string (or None) becomes an ``AbortError`` carrying it as the reason.

        Raises:
            SlotNotFoundError: no slot with that id is waiting.
        """
        exc = error if isinstance(error, BaseException) else AbortError(error or "rejected")
        self._settle(slot_id).set_exception(exc)

    def remove(self, slot_id: str) -> None:
        """Remove a ``push_and_forget`` slot (unknown ids are ignored)."""
        if slot_id in self._waiters:
            raise ValueError(f"slot {slot_id!r} is waiting for an answer: resolve or reject it")
        if self._slots.pop(slot_id, None) is not None:
            self._notify()

    def clear(self) -> None:
        """Remove every ``push_and_forget`` slot; waiting slots stay until answered."""
        removed = [s for s in self._slots.values() if s.kind == "forget"]
        for slot in removed:
            del self._slots[slot.id]
        if removed:
            self._notify()

    def _settle(self, slot_id: str) -> asyncio.Future[Any]:
        future = self._waiters.pop(slot_id, None)
        if future is None or future.done():
            raise SlotNotFoundError(slot_id)
        self._slots.pop(slot_id, None)
        self._notify()
        return future

    def _notify(self) -> None:
        snapshot = self.slots
        for listener in list(self._listeners):
            try:
                listener(snapshot)
            except Exception:
                logger.exception("a display listener raised; the other listeners still ran")
