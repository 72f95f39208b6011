"""Cooperative cancellation: an AbortController owns an AbortSignal that code can watch.

Modelled on the web's AbortController because the original framework and its users think in it,
but awaitable the asyncio way: ``await signal.wait()``, or ``await signal.race(coro)`` to run a
coroutine that is cancelled when the signal fires.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from glove_core.errors import GloveError

__all__ = ["AbortController", "AbortError", "AbortSignal"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class AbortError(GloveError):
    """The operation was aborted through an AbortSignal."""

    def __init__(self, reason: object = None) -> None:
        self.reason = reason
        super().__init__("aborted" if reason is None else f"aborted: {reason}")


class AbortSignal:
    """Tells whether an operation should stop, and lets code wait for that moment."""

    __slots__ = ("_aborted", "_callbacks", "_can_fire", "_event", "_reason")

    def __init__(self) -> None:
        # Only an AbortController fires a signal; one made on its own never fires, so racing
        # against it would only cost a task per await.
        self._can_fire = False
        self._aborted = False
        self._reason: object = None
        self._callbacks: list[Callable[[object], None]] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        """True once the controller has aborted."""
        return self._aborted

    @property
    def can_fire(self) -> bool:
        """False for a signal no ``AbortController`` owns: it never fires, so racing a
        coroutine against it is needless."""
        return self._can_fire

    @property
    def reason(self) -> object:
        """What the controller passed to ``abort()`` (None when not aborted or no reason)."""
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise AbortError if the signal has fired.

        Raises:
            AbortError: the signal has fired.
        """
        if self._aborted:
            raise AbortError(self._reason)

    def add_callback(self, callback: Callable[[object], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` when the signal fires (at once if it already has).

        Returns:
            A function that removes the callback.
        """
        if self._aborted:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> object:
        """Wait until the signal fires and return its reason."""
        if not self._aborted:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        return self._reason

    async def race(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable``, cancelling it if the signal fires first.

        Raises:
            AbortError: the signal fired before ``awaitable`` finished.
        """
        self.throw_if_aborted()
        if not self._can_fire:
            return await awaitable
        task: asyncio.Future[T] = asyncio.ensure_future(awaitable)

        def on_abort(_reason: object) -> None:
            task.cancel()

        remove = self.add_callback(on_abort)
        try:
            return await task
        except asyncio.CancelledError:
            # Our own cancellation of the inner task becomes AbortError; a cancellation of the
            # awaiting task itself must propagate untouched.
            if self._aborted and not _current_task_cancelling():
                raise AbortError(self._reason) from None
            raise
        finally:
            remove()
            if not task.done():
                task.cancel()

    def _fire(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(reason)
            except Exception:
                logger.exception("an abort callback raised; the other callbacks still ran")

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self._aborted else "active"
        return f"<AbortSignal {state}>"


def _current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class AbortController:
    """Owns an AbortSignal and fires it.

    Example:
        >>> controller = AbortController()
        >>> controller.abort("user pressed Ctrl-C")
        >>> controller.signal.aborted
        True
    """

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()
        self.signal._can_fire = True

    def abort(self, reason: Any = None) -> None:
        """Fire the signal. Calling it again has no effect."""
        self.signal._fire(reason)

    def __repr__(self) -> str:
        return f"<AbortController signal={self.signal!r}>"
