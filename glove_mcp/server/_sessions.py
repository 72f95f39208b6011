"""The headless server's session routes beyond one request: list, delete, follow, slots (internal).

- ``GET /sessions?limit=N&after=ID`` → ``{"sessions": [{"id", "created_at", "updated_at",
  "messages", "owner"}], "next": ID | null}``: the caller's own sessions (an admin's: every
  session), at most ``limit`` (1-200, default 50) in id order; pass ``next`` as ``after`` for
  the following page.

Every route here answers 404 for a session of another principal, as for an unknown one; an
admin may read (follow, list slots) any session, but only its owner changes it.
- ``DELETE /sessions/{id}`` → ``204``: the session's messages and everything kept under its
  id (permissions, inbox, queued events, active MCP servers) are deleted; an open session is
  closed first and its followers get ``deleted``. ``404`` for an unknown id, ``409`` while a
  request uses the session (a reply streaming, a history read): retry when it ends. A wake-up
  turn in progress is cancelled.
- ``GET /sessions/{id}/events?after=N`` (or ``Last-Event-ID: N``) → an SSE stream following
  the session (``_server_stream``); without a cursor it starts at the end.
- ``GET /sessions/{id}/slots`` → ``{"slots": [{"id", "renderer", "input", "call_id"}]}``:
  what the agent waits for a person to answer (``permission_request``, ``mcp_elicitation``…).
- ``POST /sessions/{id}/slots/{slot_id}`` with ``{"value": …}`` (or ``{"reject": "reason"}``)
  answers one: a permission (``permission_request``) or a server's sampling request
  (``mcp_sampling``) takes ``true`` / ``false``; discovery's question (``mcp_picker``) the
  chosen option's id, or ``""`` for none; an elicitation ``{"action": "accept" | "decline" |
  "cancel", "content"?: {…}}`` (an answer that does not fit the form comes back as a new slot
  whose input has ``error``). ``404`` for a slot that is not waiting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from glove_core import AbortController, AbortError, GloveError, Slot
from glove_core.errors import EventQueueFullError, EventTooLargeError, SlotNotFoundError
from glove_core.stores.base import count_messages, read_messages_from
from glove_core.subscribers import SubscriberEvent
from glove_core.types import new_id
from glove_mcp.server._out_of_files import OncePer, out_of_files
from glove_mcp.server._pending_events import PendingEvents
from glove_mcp.server._request_body import read_json
from glove_mcp.server._session_access import NO_FILES, RetryLater, SessionAccess, check_id
from glove_mcp.server._session_cache import CachedSession, SessionBusyError
from glove_mcp.server._sse import SseItem, error_data, event_item, frame
from glove_mcp.server._stream import FollowSnapshot, follow_stream, slot_json
from glove_mcp.server.principals import Principal

__all__ = ["MAX_CURSOR_DIGITS", "SessionGone", "SessionRoutes"]

logger = logging.getLogger(__name__)

MAX_CURSOR_DIGITS = 18
"""Longest number a cursor (``after``, ``Last-Event-ID``) may be written with."""

_DEFAULT_PAGE = 50
_MAX_PAGE = 200
_ELICIT_ACTIONS = ("accept", "decline", "cancel")
_ELICITATION = "mcp_elicitation"
_YES_NO = ("permission_request", "mcp_sampling")
_PICKER = "mcp_picker"
_WHEN_IDLE = ("auto", "wake", "defer")
_STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


class SessionGone(LookupError):
    """The followed session was deleted."""


def whole_number(text: str, name: str, what: str = "a whole number") -> int:
    """``text`` as a count (ASCII digits, at most ``MAX_CURSOR_DIGITS``), else 400."""
    text = text.strip()
    # "²" is a digit to str.isdigit; int() of 5,000 digits raises (its digit limit).
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_CURSOR_DIGITS:
        raise HTTPException(
            400,
            f"{name} must be {what} of at most {MAX_CURSOR_DIGITS} digits, got {text[:40]!r}",
        )
    return int(text)


def _count(request: Request, name: str, *, low: int, high: int | None) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return None
    stripped = text.strip()
    negative = stripped.startswith("-")
    value = whole_number(stripped[1:] if negative else stripped, name)
    value = -value if negative else value
    if value < low or (high is not None and value > high):
        bound = f"{low} to {high}" if high is not None else f"{low} or more"
        raise HTTPException(400, f"{name} must be {bound}, got {value}")
    return value


class SessionRoutes:
    """Every session route (the server's table names them), on its ``SessionAccess``.

    Args:
        access: opens sessions for a principal.
        pending: the cap on outside events waiting, every session together.
        no_files: logs running out of file descriptors once per interval.
        max_body_bytes: larger request bodies get 413.
        body_timeout: seconds a request body may take to arrive.
    """

    def __init__(
        self,
        access: SessionAccess,
        pending: PendingEvents,
        no_files: OncePer,
        *,
        max_body_bytes: int,
        body_timeout: float,
    ) -> None:
        self._access = access
        self._cache = access.cache
        self._storage = access.storage
        self._relays = access.relays
        self._pending = pending
        self._no_files = no_files
        self._max_body = max_body_bytes
        self._body_timeout = body_timeout
        # Reply streams open now, each with its turn's abort: ``stopping`` ends them.
        self._replies: dict[asyncio.Queue[SseItem | None], AbortController] = {}

    def stopping(self) -> None:
        """The server is about to stop: end every open stream now with a final ``stopping``
        item (a follow stream's carries the cursor to reconnect with), and abort the turns in
        progress (their history stays whole), so that a shutdown need not wait for clients
        to hang up."""
        self._relays.stopping()
        for queue, controller in list(self._replies.items()):
            queue.put_nowait(("stopping", {}))
            queue.put_nowait(None)
            controller.abort("the server is stopping")
        self._replies.clear()

    async def _json(self, request: Request, *, optional: bool = False) -> dict[str, Any]:
        return await read_json(
            request, max_bytes=self._max_body, body_timeout=self._body_timeout, optional=optional
        )

    async def listing(self, request: Request) -> Response:
        """``GET /sessions``."""
        principal = _principal(request)
        limit = _count(request, "limit", low=1, high=_MAX_PAGE) or _DEFAULT_PAGE
        after = request.query_params.get("after")
        if after is not None:
            check_id(after, "after")
        owner = None if principal.is_admin else principal.name
        rows = await self._storage.list_page(after, limit + 1, owner)
        page = rows[:limit]
        sessions = [
            {
                "id": r.id,
                "created_at": r.created_at,
                "updated_at": r.updated_at,
                "messages": r.messages,
                "title": r.title,
                "owner": r.owner,
            }
            for r in page
        ]
        more = len(rows) > limit
        return JSONResponse({"sessions": sessions, "next": page[-1].id if more else None})

    async def delete(self, request: Request) -> Response:
        """``DELETE /sessions/{id}``."""
        session_id = check_id(request.path_params["id"])
        principal = _principal(request)
        session = self._cache.peek(session_id)
        owner = session.owner if session is not None else await self._storage.owner(session_id)
        if owner != principal.name:  # unknown, or another's: the same answer
            raise HTTPException(404, f"no session {session_id!r}")
        try:
            existed = await self._cache.remove(session_id, lambda: self._storage.delete(session_id))
        except SessionBusyError:
            raise HTTPException(
                409,
                f"session {session_id!r} is busy: a request is using it (a reply, a history "
                "read, an event); retry when it ends",
            ) from None
        if not existed:
            raise HTTPException(404, f"no session {session_id!r}")
        relay = self._relays.peek(session_id)
        if relay is not None:
            relay.deleted()
        return Response(status_code=204)

    async def follow(self, request: Request) -> Response:
        """``GET /sessions/{id}/events``."""
        session_id = check_id(request.path_params["id"])
        principal = _principal(request)
        after = _count(request, "after", low=0, high=None)
        if after is None and "last-event-id" in request.headers:
            after = whole_number(
                request.headers["last-event-id"], "Last-Event-ID", "a message count, e.g. 12,"
            )
        # 404 for an unknown id (or another's), before streaming
        async with self._access.use(session_id, principal, read=True) as session:
            total = await count_messages(session.store)
        if after is None:
            after = total
        if after > total:
            raise HTTPException(
                400, f"after={after} is past the end of the conversation ({total} messages)"
            )

        async def read(cursor: int) -> FollowSnapshot:
            try:
                return await self._read(session_id, principal, cursor)
            except HTTPException as exc:
                if exc.status_code == 404:
                    raise SessionGone(session_id) from None
                raise

        return StreamingResponse(
            follow_stream(self._relays, session_id, read, after),
            media_type="text/event-stream",
            headers=_STREAM_HEADERS,
        )

    async def _read(self, session_id: str, principal: Principal, cursor: int) -> FollowSnapshot:
        async with self._access.use(session_id, principal, read=True) as session:
            messages = await read_messages_from(session.store, cursor)  # only from the cursor
            slots = [slot_json(s) for s in session.glove.display_manager.slots if s.kind == "wait"]
        return FollowSnapshot(
            [m.model_dump(mode="json", exclude_none=True) for m in messages], slots
        )

    async def slots(self, request: Request) -> Response:
        """``GET /sessions/{id}/slots``."""
        session_id = check_id(request.path_params["id"])
        async with self._access.use(session_id, _principal(request), read=True) as session:
            waiting = [s for s in session.glove.display_manager.slots if s.kind == "wait"]
            return JSONResponse({"slots": [slot_json(s) for s in waiting]})

    async def answer(self, request: Request) -> Response:
        """``POST /sessions/{id}/slots/{slot_id}``."""
        session_id = check_id(request.path_params["id"])
        slot_id = request.path_params["slot_id"]
        body = await self._json(request)
        if ("value" in body) == ("reject" in body):
            raise HTTPException(400, 'send either {"value": ...} or {"reject": "reason"}')
        async with self._access.use(session_id, _principal(request)) as session:
            display = session.glove.display_manager
            slot = next((s for s in display.slots if s.id == slot_id and s.kind == "wait"), None)
            if slot is None:
                raise HTTPException(
                    404, f"no slot {slot_id[:80]!r} is waiting in session {session_id!r}"
                )
            try:
                if "reject" in body:
                    reason = body["reject"]
                    if not isinstance(reason, str):
                        raise HTTPException(400, "'reject' must be a string (the reason)")
                    display.reject(slot.id, reason or "rejected")
                else:
                    display.resolve(slot.id, _checked(slot, body["value"]))
            except SlotNotFoundError:  # answered by someone else a moment ago
                raise HTTPException(
                    404, f"slot {slot_id[:80]!r} of session {session_id!r} was answered already"
                ) from None
        return JSONResponse({"answered": slot_id})

    async def create(self, request: Request) -> Response:
        """``POST /sessions``."""
        body = await self._json(request, optional=True)
        session_id = body.get("id", new_id("sess_"))
        if not isinstance(session_id, str):
            raise HTTPException(400, "'id' must be a string")
        principal = _principal(request)
        self._access.release(await self._access.acquire(session_id, principal, create=True))
        return JSONResponse({"id": session_id}, status_code=201)

    async def history(self, request: Request) -> Response:
        """``GET /sessions/{id}``."""
        async with self._access.use(
            request.path_params["id"], _principal(request), read=True
        ) as session:
            messages = await session.store.get_messages()
        return JSONResponse(
            {
                "id": request.path_params["id"],
                "messages": [m.model_dump(mode="json", exclude_none=True) for m in messages],
            }
        )

    async def event(self, request: Request) -> Response:
        """``POST /sessions/{id}/events``."""
        body = await self._json(request)
        missing = [k for k in ("id", "source", "kind", "content") if not body.get(k)]
        if missing:
            raise HTTPException(400, f"missing event field(s): {', '.join(missing)}")
        when_idle = body.get("when_idle", "auto")
        if when_idle not in _WHEN_IDLE:
            raise HTTPException(400, f"when_idle must be one of {', '.join(_WHEN_IDLE)}")
        expires_at = None
        if body.get("expires_at") is not None:
            try:
                expires_at = datetime.fromisoformat(str(body["expires_at"])[:64])
            except ValueError:
                raise HTTPException(400, "expires_at must be an ISO 8601 date-time") from None
            if expires_at.tzinfo is None:
                raise HTTPException(400, "expires_at needs a timezone (e.g. ...Z or +00:00)")
        for name in ("id", "source", "kind", "content"):
            if not isinstance(body[name], str):
                raise HTTPException(400, f"event field {name!r} must be a string")
        async with self._access.use(request.path_params["id"], _principal(request)) as session:
            wait = await self._pending.full()
            if wait is not None:
                raise RetryLater(
                    503,
                    "the server holds as many pending outside events as it may (every session "
                    "together); retry when they have been handled",
                    wait,
                )
            try:
                disposition = await session.glove.emit_event(
                    id=body["id"],
                    source=body["source"],
                    kind=body["kind"],
                    content=body["content"],
                    when_idle=when_idle,
                    expires_at=expires_at,
                )
            except EventTooLargeError as exc:
                raise HTTPException(413, str(exc)) from None
            except EventQueueFullError as exc:
                raise RetryLater(429, str(exc), 5) from None  # the sender retries later
            self._pending.added()
        return JSONResponse({"disposition": disposition})

    async def message(self, request: Request) -> Response:
        """``POST /sessions/{id}/messages``: the reply as an SSE stream."""
        body = await self._json(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise HTTPException(400, "'text' must be a non-empty string")
        session = await self._access.acquire(request.path_params["id"], _principal(request))
        queue: asyncio.Queue[SseItem | None] = asyncio.Queue()
        controller = AbortController()
        self._replies[queue] = controller
        # The turn runs to completion even if the client goes away, so history stays whole;
        # the session stays pinned (never closed) until it ends.
        task = asyncio.create_task(self._turn(session, text, queue, controller))
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        return StreamingResponse(
            _reply(queue),
            media_type="text/event-stream",
            headers=_STREAM_HEADERS,
        )

    async def resume_interrupted(self, session_id: str, wait: float) -> int:
        """Open ``session_id`` for its owner and let its agent finish the turns a dead
        instance left (a durable execution); give up after ``wait`` seconds without the turn
        (a live instance is running one). Returns how many turns were resumed."""
        owner = await self._access.storage.owner(session_id)
        if owner is None:
            return 0
        session = await self._access.acquire(session_id, Principal(owner))
        try:
            async with session.lock:
                try:
                    return await session.glove.resume_interrupted(wait=wait)
                except AbortError:
                    return 0  # another instance holds the turn: it finishes what is left
                finally:
                    relay = self._relays.peek(session.id)
                    if relay is not None:
                        await relay.turn_ended()
        finally:
            self._access.release(session)

    async def _turn(
        self,
        session: CachedSession,
        text: str,
        queue: asyncio.Queue[SseItem | None],
        controller: AbortController,
    ) -> None:
        forwarder = _SseForwarder(queue)
        glove = session.glove
        try:
            async with session.lock:
                glove.add_subscriber(forwarder)
                unsubscribe = glove.display_manager.subscribe(forwarder.slots_changed)
                try:
                    result = await glove.process_request(text, signal=controller.signal)
                finally:
                    unsubscribe()
                    glove.remove_subscriber(forwarder)
                    relay = self._relays.peek(session.id)
                    if relay is not None:
                        await relay.turn_ended()  # a turn that failed part way announced no save
            usage = result.usage.model_dump()
            await queue.put(("final", {"text": result.text, "usage": usage}))
        except GloveError as exc:
            message = f"{type(exc).__name__}: {exc}"
            await queue.put(("error", error_data(message, session_id=session.id)))
        except Exception as exc:
            if out_of_files(exc):
                self._no_files.warning(NO_FILES)
            else:
                logger.exception("a session request failed")
            await queue.put(("error", {"error": "internal error; see the server log"}))
        finally:
            self._replies.pop(queue, None)
            self._access.release(session)
            await queue.put(None)


def _checked(slot: Slot, value: Any) -> Any:
    """``value`` if it is an answer ``slot`` takes, else 400 saying what fits."""
    renderer = slot.renderer
    if renderer in _YES_NO and not isinstance(value, bool):
        raise HTTPException(400, f"a {renderer} is answered with true (allow) or false")
    if renderer == _PICKER:
        options = slot.input.get("options", []) if isinstance(slot.input, dict) else []
        ids = [o.get("id") for o in options if isinstance(o, dict)]
        if value != "" and value not in ids:
            listed = ", ".join(repr(i) for i in ids)
            raise HTTPException(
                400, f'an mcp_picker is answered with one of {listed}, or "" for none of them'
            )
    if renderer == _ELICITATION:
        if not isinstance(value, dict) or value.get("action") not in _ELICIT_ACTIONS:
            raise HTTPException(
                400,
                'an mcp_elicitation is answered with {"action": "accept" | "decline" | '
                '"cancel", "content": {...}}',
            )
        if "content" in value and not isinstance(value["content"], dict):
            raise HTTPException(400, "an elicitation's 'content' must be an object of fields")
    return value


async def _reply(queue: asyncio.Queue[SseItem | None]) -> AsyncIterator[str]:
    while (item := await queue.get()) is not None:
        yield frame(*item)


class _SseForwarder:
    """Turns a session's subscriber events (and slot changes) into a reply stream's items."""

    def __init__(self, queue: asyncio.Queue[SseItem | None]) -> None:
        self._queue = queue

    async def record(self, event: SubscriberEvent) -> None:
        item = event_item(event)
        if item is not None:
            await self._queue.put(item)

    def slots_changed(self, slots: list[Slot]) -> None:
        waiting = [slot_json(s) for s in slots if s.kind == "wait"]
        self._queue.put_nowait(("slots", {"slots": waiting}))
