"""Following a session: every agent event of it, to any number of followers (internal).

``GET /sessions/{id}/events`` streams what the session's agent does — a request's reply, and
the reply of a turn an outside event woke, which no request is waiting for — as Server-Sent
Events. Each session has one ``SessionRelay``, a subscriber of its ``Glove`` (and a listener of
its display manager) from the moment the session opens until it closes; followers register
with the relay by session id, so a session closed for being idle and opened again (by a
message, or an event posted to it) reaches the same followers. After each event that follows
a save (a model call's tokens, a tool result, injected outside events…), and before a model
call's first live item (the request's own message is saved before the call, and no event
announces it), the relay reads the messages saved since its last read, once for all followers
and before the agent goes on, so saved messages and live items reach a follower in the order
they happened.

What a follower is guaranteed: every message saved in the conversation reaches it exactly
once and in order, as a ``message`` item whose SSE ``id`` is its position plus one. The stream
first sends the saved messages after the cursor (``?after=N`` or the ``Last-Event-ID``
header: the ``id`` of the last ``message`` seen), then live items. Live items (``text_delta``,
``tool_use``, ``tool_result``, ``slots``…, see ``_server_sse``) have no ``id``: they preview
what is being saved, and what is missed of them while disconnected arrives as saved messages
after reconnecting with the cursor. A follower too slow to keep up (``max_backlog`` items
waiting) gets ``reconnect`` ``{"after": N}`` and the stream ends: reconnecting there loses
nothing saved. Deleting the session sends ``deleted`` and ends every stream (on another
instance too, when the store hears deletions: ``PostgresStore.on_deleted``); so does
``stopping`` ``{"after": N}``, sent when the server stops (reconnect there later).

Across instances (``HeadlessServer(database_url=)``): the turn may run on another instance,
whose agent events never reach this one. When the session's store announces saves by any
process (``SavedNotices``: ``PostgresStore.on_saved``, a ``LISTEN/NOTIFY`` wake-up), the relay
subscribes while it has followers and the session is open here, and reads the messages saved
since its last read on each notice (and every ``SAFETY_READ_SECONDS`` in case one was lost),
so the saved-message guarantee holds whichever instance saves. Live items come only from the
turn of *this* instance: another instance's ``text_delta``, ``tool_use``… are not relayed.
When the session closes here while followed (idle, evicted), each follow stream reads on from
its cursor, which opens the session again and resumes the subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from glove_core import Glove, Slot, StoreAdapter
from glove_core.stores.base import read_messages_from
from glove_core.subscribers import (
    CompactionEnd,
    EventInjected,
    EventWakeFailed,
    SubagentCompleted,
    SubscriberEvent,
    TextDelta,
    TokenConsumption,
    ToolUse,
    ToolUseResult,
)
from glove_mcp.server._sse import SseItem, event_item, frame

__all__ = [
    "FollowSnapshot",
    "Relays",
    "SavedNotices",
    "SessionRelay",
    "follow_stream",
    "slot_json",
]

logger = logging.getLogger(__name__)

KEEP_ALIVE_SECONDS = 15.0
"""A comment line this often keeps proxies from closing a quiet stream."""

SAFETY_READ_SECONDS = 30.0
"""How often a subscribed relay reads again without a notice (one lost on the way)."""


@runtime_checkable
class SavedNotices(Protocol):
    """A store that hears what any process does to its conversation (``PostgresStore``): each
    append, and its deletion; and that can say whether the conversation still exists."""

    def on_saved(self, callback: Callable[[], None]) -> AbstractAsyncContextManager[None]:
        """Call ``callback`` after each append to the conversation while the block runs."""
        ...

    def on_deleted(self, callback: Callable[[], None]) -> AbstractAsyncContextManager[None]:
        """Call ``callback`` when the conversation is deleted while the block runs."""
        ...

    async def session_exists(self) -> bool:
        """Whether the conversation exists (one primary-key lookup)."""
        ...


# Events sent once something was saved: the follower reads the conversation again then.
_AFTER_SAVE = (
    TokenConsumption,
    ToolUseResult,
    EventInjected,
    EventWakeFailed,
    CompactionEnd,
    SubagentCompleted,
)

_MODEL_OUTPUT = (TextDelta, ToolUse)
"""A model call's live preview items."""

_Signal = Literal["lagging", "deleted", "reopen", "stopping"]


@dataclass(frozen=True)
class _Saved:
    """Messages saved from position ``start`` on (JSON)."""

    start: int
    messages: list[dict[str, Any]]


_Entry = SseItem | _Saved | _Signal


def slot_json(slot: Slot) -> dict[str, Any]:
    """A waiting display slot as the API shows it."""
    return {"id": slot.id, "renderer": slot.renderer, "input": slot.input, "call_id": slot.call_id}


def _waiting(slots: list[Slot]) -> list[dict[str, Any]]:
    return [slot_json(s) for s in slots if s.kind == "wait"]


class _Follower:
    """One follower's backlog: live items and signals, at most ``limit`` waiting."""

    def __init__(self, limit: int) -> None:
        self._items: deque[_Entry] = deque()
        self._ready = asyncio.Event()
        self._limit = limit
        self._stopped = False
        self.cursor = 0
        """How many messages this follower has (its stream keeps it): a relay that has not
        read yet starts at the lowest cursor, not at the conversation's beginning."""

    def put(self, item: _Entry) -> None:
        if self._stopped:
            return
        if item == "reopen":
            if "reopen" not in self._items:  # one read from the cursor covers them all
                self._items.append(item)
        elif item in ("lagging", "deleted", "stopping") or len(self._items) >= self._limit:
            # Nothing queued matters any more: the stream ends with this signal.
            self._items.clear()
            self._items.append(item if item in ("deleted", "stopping") else "lagging")
            self._stopped = True
        else:
            self._items.append(item)
        self._ready.set()

    async def get(self, wait: float) -> _Entry | None:
        """The next item, or None when ``wait`` seconds pass without one."""
        if not self._items:
            self._ready.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._ready.wait()
            if not self._items:
                return None
        return self._items.popleft()


class SessionRelay:
    """The fan-out of one session's events: a subscriber of its Glove while it is open."""

    def __init__(self, session_id: str, max_backlog: int) -> None:
        self.session_id = session_id
        self.max_backlog = max_backlog
        self.attached = False
        self._followers: set[_Follower] = set()
        self._store: StoreAdapter | None = None
        self._known: int | None = None  # messages the last read saw; None: not read yet
        self._reading = asyncio.Lock()  # one read at a time: local events and notices
        self._watch: asyncio.Task[None] | None = None
        self._previewing = False  # a model call's live items flow; saves before it were read

    def bind(self, store: StoreAdapter | None) -> None:
        """The open session's store (None once it closed)."""
        self.attached = store is not None
        self._store, self._known = store, None
        if store is None and self._stop_watching() and self._followers:
            # Saves elsewhere would go unheard: each stream reads on (opening the session).
            self._send("reopen")
        self._start_watching()

    @property
    def watching(self) -> bool:
        """Whether the relay is subscribed to saves by any instance now."""
        return self._watch is not None

    def _start_watching(self) -> None:
        # A store that hears other instances (SavedNotices) is watched while followed.
        store: object = self._store
        if self._watch is None and self._followers and isinstance(store, SavedNotices):
            self._watch = asyncio.get_running_loop().create_task(self._watching(store))
            self._watch.add_done_callback(self._watch_ended)

    def _stop_watching(self) -> bool:
        task, self._watch = self._watch, None
        if task is None:
            return False
        task.cancel()
        return True

    async def _watching(self, store: SavedNotices) -> None:
        notice = asyncio.Event()
        gone = asyncio.Event()  # a deletion was announced (or the LISTEN connection came back)

        def deleted() -> None:
            gone.set()
            notice.set()

        me = asyncio.current_task()
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(store.on_saved(notice.set))
            await stack.enter_async_context(store.on_deleted(deleted))
            check = False
            # ``_stop_watching`` forgets the task before cancelling it: checking that it is
            # still the relay's ends it even when a cancellation is lost inside the database
            # driver during a read (seen under load with psycopg's pool).
            while self._watch is me:
                # First pass: what was saved before the subscription listened.
                await self.saved()
                if (check or gone.is_set()) and not await store.session_exists():
                    if self._watch is me:
                        self._watch = None
                        self._send("deleted")
                    return
                if self._watch is not me:
                    return
                gone.clear()
                try:
                    async with asyncio.timeout(SAFETY_READ_SECONDS):
                        await notice.wait()
                    check = False
                except TimeoutError:
                    check = True  # the safety pass: a deletion's notice may be lost too
                notice.clear()

    @property
    def followers(self) -> int:
        """How many streams follow the session now."""
        return len(self._followers)

    async def record(self, event: SubscriberEvent) -> None:
        """Pass an agent event on to every follower (the Glove calls this)."""
        # Kept whether or not anyone follows, so a follower who joins mid-call finds it true.
        opens_call = isinstance(event, _MODEL_OUTPUT) and not self._previewing
        if isinstance(event, _MODEL_OUTPUT):
            self._previewing = True
        elif isinstance(event, _AFTER_SAVE):
            self._previewing = False  # the next model call reads again before its first item
        if not self._followers:
            return
        if opens_call:
            # A model call's first live item: what was saved before the call (the request's
            # own message, which no event announces) goes first, so the order holds.
            await self.saved()
        item = event_item(event)  # here, inside record: where subagent events can be told apart
        if item is not None:
            self._send(item)
        if isinstance(event, _AFTER_SAVE):
            await self.saved()

    async def turn_ended(self) -> None:
        """A turn ended, however (the server calls this after each request): send what it
        saved that no event announced (a turn that failed part way), and make the next model
        call read before its first live item even if this one's ending was never heard."""
        self._previewing = False
        await self.saved()

    def slots_changed(self, slots: list[Slot]) -> None:
        """Tell followers the waiting slots (the display manager calls this)."""
        self._send(("slots", {"slots": _waiting(slots)}))

    async def saved(self) -> None:
        """Send followers the messages saved since the last read (also called by the server
        after a request that failed part way, whose saves no event announced)."""
        async with self._reading:
            store = self._store
            if store is None or not self._followers:
                self._known = None  # nobody followed meanwhile: read from the start next time
                return
            # Not read since binding: nobody needs what every follower already has.
            start = (
                self._known if self._known is not None else min(f.cursor for f in self._followers)
            )
            # Only what is new: a store with ``get_messages_from`` skips the rest unread.
            messages = await read_messages_from(store, start)
            if store is not self._store:
                return  # the session closed (or reopened) during the read
            self._known = start + len(messages)
            if messages:
                dumped = [m.model_dump(mode="json", exclude_none=True) for m in messages]
                self._send(_Saved(start, dumped))

    def deleted(self) -> None:
        """The session is gone: every stream ends."""
        self._send("deleted")

    def _send(self, item: _Entry) -> None:
        for follower in self._followers:
            follower.put(item)

    def join(self) -> _Follower:
        self._previewing = False  # a new follower: read before the next live item
        follower = _Follower(self.max_backlog)
        self._followers.add(follower)
        self._start_watching()
        return follower

    def leave(self, follower: _Follower) -> None:
        self._followers.discard(follower)
        if not self._followers:
            self._stop_watching()

    def _watch_ended(self, task: asyncio.Task[None]) -> None:
        """A subscription that failed (the database unreachable): followers are told to
        reconnect from their cursor, which subscribes again; nothing saved is lost."""
        if task.cancelled() or task.exception() is None:
            return
        logger.warning(
            "session %r: following saves by other instances failed: %s",
            self.session_id,
            task.exception(),
        )
        if self._watch is task:
            self._watch = None
            self._send("lagging")


class Relays:
    """The relays of a server's sessions, kept while a session is open or followed.

    Args:
        max_backlog: items a follower may have waiting before it is told to reconnect.
    """

    def __init__(self, max_backlog: int = 1000) -> None:
        self.max_backlog = max_backlog
        self._relays: dict[str, SessionRelay] = {}

    def __len__(self) -> int:
        return len(self._relays)

    def stopping(self) -> None:
        """The server is stopping: every follow stream ends with a ``stopping`` item."""
        for relay in list(self._relays.values()):
            relay._stop_watching()  # (this module's own class)
            relay._send("stopping")

    def get(self, session_id: str) -> SessionRelay:
        """The session's relay (made when missing)."""
        relay = self._relays.get(session_id)
        if relay is None:
            relay = self._relays[session_id] = SessionRelay(session_id, self.max_backlog)
        return relay

    def attach(self, session_id: str, glove: Glove, store: StoreAdapter) -> Callable[[], None]:
        """Subscribe the session's relay to ``glove`` (just opened on ``store``); returns the
        detach call to make when the session closes (before the store closes)."""
        relay = self.get(session_id)
        relay.bind(store)
        glove.add_subscriber(relay)
        unsubscribe = glove.display_manager.subscribe(relay.slots_changed)

        def detach() -> None:
            unsubscribe()
            glove.remove_subscriber(relay)
            relay.bind(None)
            self._drop_if_unused(relay)

        return detach

    def peek(self, session_id: str) -> SessionRelay | None:
        """The session's relay if it has one."""
        return self._relays.get(session_id)

    @contextlib.contextmanager
    def following(self, session_id: str) -> Any:
        """Register a follower of ``session_id`` for the block; yields ``(relay, follower)``."""
        relay = self.get(session_id)
        follower = relay.join()
        try:
            yield relay, follower
        finally:
            relay.leave(follower)
            self._drop_if_unused(relay)

    def _drop_if_unused(self, relay: SessionRelay) -> None:
        if (
            not relay.attached
            and not relay.followers
            and self._relays.get(relay.session_id) is relay
        ):
            del self._relays[relay.session_id]


@dataclass(frozen=True)
class FollowSnapshot:
    """What a follower reads from the session: messages from a cursor on, and the slots."""

    messages: list[dict[str, Any]]
    """The saved messages from the cursor on (JSON)."""
    slots: list[dict[str, Any]]
    """The slots waiting for an answer."""


Reader = Callable[[int], Awaitable[FollowSnapshot]]
"""Reads the session from a cursor (raises ``LookupError`` when the session is gone)."""


async def follow_stream(
    relays: Relays, session_id: str, read: Reader, after: int
) -> AsyncGenerator[str, None]:
    """The SSE frames of a follow stream from cursor ``after``.

    The follower joins before the first read, so a message saved meanwhile is in that read or
    announced to the follower afterwards (then read once, as the cursor has moved past it).
    """
    with relays.following(session_id) as (_, follower):
        follower.cursor = after  # before any await: the relay's first read may start here
        snapshot = await _read_or_none(read, after)
        if snapshot is None:
            yield frame("deleted", {"id": session_id})
            return
        frames, cursor = _messages(snapshot.messages, after)
        follower.cursor = cursor
        for text in frames:
            yield text
        yield frame("slots", {"slots": snapshot.slots})
        yield frame("ready", {"after": cursor})
        while True:
            item = await follower.get(KEEP_ALIVE_SECONDS)
            if item is None:
                yield ": keep-alive\n\n"
                continue
            if item == "lagging":
                yield frame("reconnect", {"after": cursor})
                return
            if item == "deleted":
                yield frame("deleted", {"id": session_id})
                return
            if item == "stopping":  # the server is stopping: the cursor to reconnect with
                yield frame("stopping", {"after": cursor})
                return
            if isinstance(item, tuple):
                yield frame(*item)
                continue
            if isinstance(item, _Saved) and item.start <= cursor:
                messages = item.messages[cursor - item.start :]
            else:
                # The session closed here ("reopen"), or these saves start past the cursor
                # (saved before the relay's first read): read on from the cursor, which
                # covers them too.
                snapshot = await _read_or_none(read, cursor)
                if snapshot is None:
                    yield frame("deleted", {"id": session_id})
                    return
                messages = snapshot.messages
            frames, cursor = _messages(messages, cursor)
            follower.cursor = cursor
            for text in frames:
                yield text


async def _read_or_none(read: Reader, cursor: int) -> FollowSnapshot | None:
    try:
        return await read(cursor)
    except LookupError:  # the session was deleted
        return None


def _messages(messages: list[dict[str, Any]], cursor: int) -> tuple[list[str], int]:
    """The ``message`` frames of ``messages`` (from position ``cursor``) and the cursor after."""
    frames = []
    for message in messages:
        cursor += 1
        frames.append(frame("message", {"index": cursor - 1, "message": message}, str(cursor)))
    return frames, cursor
