"""Turns: the requests and event wake-ups of one Glove run one at a time.

A turn holds the Glove's lock, then the store's turn lock when the store has one (so turns of
one conversation never overlap across processes either), runs the turn preparers, then its
body; both locks are released before ``after`` runs. A tool that calls
``process_request`` on its own Glove would wait for its own turn forever; the context variable
below catches that instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from glove_core.abort import AbortSignal

__all__ = ["HoldConversation", "TurnPreparer", "Turns"]

# The turn owners (Gloves) whose turn is running in the current task and the tasks it spawned.
_RUNNING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "glove_running", default=frozenset()
)

TurnPreparer = Callable[[AbortSignal], Awaitable[None] | None]
"""Runs before every request and every event wake-up, inside the turn."""

HoldConversation = Callable[[AbortSignal], AbstractAsyncContextManager[None]]
"""A store's ``turn_lock``: holds the conversation for one turn, across processes."""


class Turns:
    """The turn lock and turn preparers of one Glove.

    Args:
        hold: the store's turn lock (``TurnLockStore.turn_lock``), or None for a store that
            only this process uses.
    """

    def __init__(self, hold: HoldConversation | None = None) -> None:
        self._lock = asyncio.Lock()
        self._hold = hold
        self._preparers: list[TurnPreparer] = []

    def busy(self) -> bool:
        """Whether a turn is running now."""
        return self._lock.locked()

    @staticmethod
    def running_in_this_task(owner: object) -> bool:
        """Whether a turn of ``owner`` is running in the current task (or one it spawned)."""
        return id(owner) in _RUNNING.get()

    def add_preparer(self, fn: TurnPreparer) -> Callable[[], None]:
        self._preparers.append(fn)

        def remove() -> None:
            if fn in self._preparers:
                self._preparers.remove(fn)

        return remove

    @asynccontextmanager
    async def turn(
        self, owner: object, signal: AbortSignal, after: Callable[[], Awaitable[None]]
    ) -> AsyncIterator[None]:
        """Wait for the turn (``signal`` aborts the wait), run the preparers, run the body;
        ``after`` runs once the turn is released."""
        await signal.race(self._lock.acquire())
        try:
            async with self._hold(signal) if self._hold is not None else nullcontext():
                token = _RUNNING.set(_RUNNING.get() | {id(owner)})
                try:
                    for preparer in list(self._preparers):
                        prepared = preparer(signal)
                        if inspect.isawaitable(prepared):
                            await prepared
                    yield
                finally:
                    _RUNNING.reset(token)
        finally:
            self._lock.release()
            await after()
