"""The headless server's open sessions: a bounded cache that closes idle ones (internal).

An open session holds its ``Glove``, the resources its factory opened (an MCP mount, say) and
its store, which together keep a few file descriptors and sockets. The server cannot keep one
per session ever seen, so the cache keeps at most ``max_sessions`` of them and closes one that
was idle for ``idle_timeout`` seconds, or the least recently used one when a new session needs
room. Nothing is lost: the conversation is in the store, and the next request for that id
opens the session again from there.

A session is *pinned* while a request uses it (a turn, a stream, a history read, an event):
pinned sessions are never closed, so the cache may hold more than ``max_sessions`` when that
many are busy at once — up to ``max_open`` (half as many again). Beyond that, an open waits
for a session to be released (a burst of requests for many sessions is served a few at a
time, within the descriptors the process has) and, after ``room_timeout`` seconds without
room, fails with ``NoRoomError`` (the server answers 503 with ``Retry-After``). A session
being closed is finished closing before it is opened again, so two Gloves never share one
conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from glove_core import Glove
from glove_core.errors import SlotNotFoundError
from glove_core.resources import AsyncResource
from glove_mcp.server._out_of_files import descriptor_share
from glove_mcp.server.session_storage import SessionStore

__all__ = [
    "CachedSession",
    "NoRoomError",
    "SessionBusyError",
    "SessionCache",
    "SessionOpenError",
    "default_max_sessions",
]

logger = logging.getLogger(__name__)


def default_max_sessions() -> int:
    """``ulimit -n`` / 16, between 4 and 1000: an open session of ``glove-mcp serve`` holds
    about 6 descriptors (three SQLite connections), which leaves over half the limit for
    connections (``HttpLimits.max_connections`` takes half) and MCP sockets."""
    return descriptor_share(16, low=4)


class SessionOpenError(Exception):
    """``acquire(..., new=True)`` found the session open already (the caller answers 409)."""


class NoRoomError(Exception):
    """Every open session stayed busy for ``room_timeout`` seconds: no room to open another."""


class SessionBusyError(Exception):
    """``remove`` found the session in use by a request (the caller answers 409)."""


@dataclass(eq=False)
class CachedSession:
    """One open session: its agent, the resources the factory opened, its store."""

    id: str
    glove: Glove
    store: SessionStore
    stack: AsyncExitStack
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Requests to one session take turns."""
    pins: int = 0
    last_used: float = 0.0
    owner: str = "default"
    """The principal the session belongs to."""

    async def aclose(self, *, wait: bool) -> None:
        """Close the Glove, then what the factory opened, then the store (each even if the one
        before failed). With ``wait``, a wake-up turn in progress finishes first."""
        try:
            if wait:
                # A woken turn waiting for a person's answer would never end: refuse the
                # question (a permission is denied, an elicitation cancelled), then wait.
                display = self.glove.display_manager
                for slot in display.slots:
                    if slot.kind == "wait":
                        with contextlib.suppress(SlotNotFoundError):
                            display.reject(slot.id, "the session closed before anyone answered")
                await self.glove.wait_for_wakeups()
            await self.glove.aclose()
        finally:
            try:
                await self.stack.aclose()
            finally:
                await self.store.aclose()


Opener = Callable[[], Awaitable[CachedSession]]
"""Opens a session that is not in the cache (raises to refuse, e.g. an unknown id)."""


class SessionCache(AsyncResource):
    """At most ``max_sessions`` idle sessions open; idle ones close after ``idle_timeout``.

    Args:
        max_sessions: sessions kept open (1 or more). When a session must open and this many
            are open, the least recently used idle ones are closed first.
        idle_timeout: seconds (more than 0) after its last request at which an idle session is
            closed; ``None`` keeps idle sessions until the cap needs room.
        clock: the time source (seconds, monotonic).
        max_open: sessions open at once, busy ones included (default ``max_sessions`` and
            half as many again); an open beyond waits for a session to be released.
        room_timeout: seconds an open waits for room before ``NoRoomError`` (default 10).
    """

    def __init__(
        self,
        max_sessions: int,
        idle_timeout: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_open: int | None = None,
        room_timeout: float = 10.0,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be 1 or more, got {max_sessions}")
        if idle_timeout is not None and idle_timeout <= 0:
            raise ValueError(f"idle_timeout must be more than 0 seconds, got {idle_timeout}")
        self.max_sessions = max_sessions
        self.max_open = max(max_sessions, max_open or max_sessions + max(1, max_sessions // 2))
        self.room_timeout = room_timeout
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._reserved = 0  # opens in progress that hold a place under max_open
        self._change: asyncio.Future[None] | None = None  # done when a session frees up
        self._open: OrderedDict[str, CachedSession] = OrderedDict()  # least recent first
        self._opening: dict[str, asyncio.Task[CachedSession]] = {}
        self._closing: dict[str, asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._open)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._open

    def peek(self, session_id: str) -> CachedSession | None:
        """The open session ``session_id``, if it is open (not pinned: only to look at)."""
        return self._open.get(session_id)

    # -- use ------------------------------------------------------------------------------

    async def acquire(self, session_id: str, opener: Opener, *, new: bool = False) -> CachedSession:
        """The open session ``session_id``, pinned; ``opener`` opens it when it is not open.

        Pair with ``release``. Concurrent acquires of one id share a single ``opener`` call.

        Raises:
            SessionOpenError: ``new`` and the session is open already.
        """
        if self._closed:
            raise RuntimeError("the session cache is closed (the server is shutting down)")
        self._start_sweeper()
        while True:
            closing = self._closing.get(session_id)
            # A finished close stays listed until its done callback runs: awaiting it again
            # would not yield, and this loop would spin before the callback could run.
            if closing is not None and not closing.done():
                await asyncio.shield(closing)  # a close in progress finishes first
                continue
            session = self._open.get(session_id)
            if session is not None:
                if new:
                    raise SessionOpenError(session_id)
                self._pin(session)
                return session
            pending = self._opening.get(session_id)
            if pending is None:
                break
            with contextlib.suppress(Exception):
                await asyncio.shield(pending)
            # Opened (then it is in the cache) or refused (then this caller tries itself).
        # Registered before any await, so a concurrent acquire of this id waits for it.
        task = asyncio.create_task(self._open_one(session_id, opener))
        self._opening[session_id] = task
        try:
            return await asyncio.shield(task)
        finally:
            if task.done():
                self._opening.pop(session_id, None)
            else:  # this caller was cancelled; the open completes for the next one
                task.add_done_callback(lambda _: self._opening.pop(session_id, None))

    def release(self, session: CachedSession) -> None:
        """Unpin a session ``acquire`` returned."""
        session.pins -= 1
        session.last_used = self._clock()
        if session.pins == 0:
            self._changed()  # an open waiting for room may close it now

    def _changed(self) -> None:
        change, self._change = self._change, None
        if change is not None and not change.done():
            change.set_result(None)

    async def remove(self, session_id: str, then: Callable[[], Awaitable[bool]]) -> bool:
        """Close ``session_id`` if it is open, then run ``then`` (deleting it) and return what
        it returns. Requests for the id meanwhile wait, and then find it gone.

        A wake-up turn in progress is cancelled (its events go with the session).

        Raises:
            SessionBusyError: a request is using the session, or opening it.
        """
        while (closing := self._closing.get(session_id)) is not None and not closing.done():
            await asyncio.shield(closing)
        session = self._open.get(session_id)
        if session_id in self._opening or (session is not None and session.pins > 0):
            raise SessionBusyError(session_id)
        if session is not None:
            del self._open[session_id]
        result: list[bool] = []

        async def close_then_delete() -> None:
            if session is not None:
                await self._close_one(session, wait=False)
            result.append(await then())

        # Registered as a close: an acquire of this id waits for it before looking it up.
        task = asyncio.create_task(close_then_delete())
        self._closing[session_id] = task
        task.add_done_callback(lambda _: self._closing.pop(session_id, None))
        await asyncio.shield(task)
        return result[0]

    # -- eviction -------------------------------------------------------------------------

    async def evict_idle(self) -> int:
        """Close every unpinned session idle for ``idle_timeout`` or longer; how many closed."""
        if self.idle_timeout is None:
            return 0
        cutoff = self._clock() - self.idle_timeout
        idle = [s for s in self._open.values() if s.pins == 0 and s.last_used <= cutoff]
        for session in idle:
            self._evict(session)
        await self._wait_closing()
        return len(idle)

    async def _make_room(self) -> None:
        """Close least recently used idle sessions until one more fits under the cap."""
        excess = len(self._open) + self._reserved + 1 - self.max_sessions  # this open included
        for session in list(self._open.values()):
            if excess <= 0:
                break
            if session.pins == 0:
                self._evict(session)
                excess -= 1
        await self._wait_closing()

    def _evict(self, session: CachedSession) -> None:
        del self._open[session.id]
        logger.debug("closing idle session %r", session.id)
        task = asyncio.create_task(self._close_one(session))
        self._closing[session.id] = task
        task.add_done_callback(lambda _: self._closing.pop(session.id, None))

    async def _close_one(self, session: CachedSession, *, wait: bool = True) -> None:
        try:
            await session.aclose(wait=wait)
        except Exception:
            # Closing released what it could; the conversation is safe in the store.
            logger.warning("closing session %r failed", session.id, exc_info=True)
        finally:
            self._changed()

    async def _wait_closing(self) -> None:
        if self._closing:
            await asyncio.wait([asyncio.shield(t) for t in self._closing.values()])

    # -- internals ------------------------------------------------------------------------

    async def _open_one(self, session_id: str, opener: Opener) -> CachedSession:
        await self._reserve()
        try:
            session = await opener()
        finally:
            self._reserved -= 1
            self._changed()
        if self._closed:
            await session.aclose(wait=False)
            raise RuntimeError("the session cache was closed while the session opened")
        self._open[session_id] = session
        self._pin(session)  # for the caller that started the open
        return session

    async def _reserve(self) -> None:
        """Hold a place under ``max_open`` for one open, waiting for one to be released."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.room_timeout
        while True:
            await self._make_room()
            if len(self._open) + self._reserved < self.max_open:
                self._reserved += 1
                return
            if self._change is None:
                self._change = loop.create_future()
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise TimeoutError
                async with asyncio.timeout(remaining):
                    await asyncio.shield(self._change)
            except TimeoutError:
                raise NoRoomError(
                    f"{len(self._open)} sessions are open and busy, the most this server "
                    "keeps open at once (raise --max-sessions and ulimit -n); retry shortly"
                ) from None

    def _pin(self, session: CachedSession) -> None:
        session.pins += 1
        session.last_used = self._clock()
        self._open.move_to_end(session.id)

    def _start_sweeper(self) -> None:
        if self._sweeper is None and self.idle_timeout is not None and not self._closed:
            self._sweeper = asyncio.create_task(self._sweep(self.idle_timeout))

    async def _sweep(self, idle_timeout: float) -> None:
        # Checks a few times per timeout, so a session closes at most 25% late.
        interval = min(max(idle_timeout / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.evict_idle()
            except Exception:
                logger.warning("closing idle sessions failed", exc_info=True)

    async def aclose(self) -> None:
        """Close every session (wake-ups in progress are cancelled). Idempotent."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self._opening:
            await asyncio.wait(list(self._opening.values()))
        sessions, self._open = list(self._open.values()), OrderedDict()
        await self._wait_closing()
        for session in sessions:
            try:
                await session.aclose(wait=False)
            except Exception:
                logger.warning("closing session %r failed", session.id, exc_info=True)

    def __repr__(self) -> str:
        return f"<SessionCache open={len(self._open)} max={self.max_sessions}>"
