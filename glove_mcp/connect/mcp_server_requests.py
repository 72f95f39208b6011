"""What one session answers when its server asks (sampling, elicitation, roots) and where what
the server tells it goes (log messages, list changes).

``ServerRequests`` is built by ``connect_mcp`` or ``mount_mcp`` from their options and handed
to each ``Session``, which turns it into the SDK ``ClientSession``'s callbacks. The SDK declares
a client capability exactly when the matching callback is given, so a connection with no
sampling model declares no sampling, and a server that asks anyway gets the SDK's refusal.

Both protocol eras go through the same callbacks: on the handshake protocol the server sends
its requests (inside a call's response stream, or on the standalone stream); on the stateless
2026-07-28 protocol a call comes back as an ``InputRequiredResult`` whose input requests
``resolve_input_required`` answers with those same callbacks before retrying the call.

Floods: a server that sends log messages faster than ``LOG_RATE`` per second gets the rest
dropped (counted, and said in the next message let through), so a noisy server cannot fill
the application's logs or its subscribers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import mcp_types as types
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError

from glove_core.models import ModelAdapter
from glove_mcp.connect._tracing import server_request_span
from glove_mcp.connect.elicitation import OnElicitation, answer_elicitation
from glove_mcp.connect.sampling import SAMPLING_CAPABILITY, SamplingAnswer, answer_sampling
from glove_mcp.connect.tasks import TaskWatch
from glove_mcp.subscribers import McpLog

__all__ = [
    "LOG_RATE",
    "MAX_INPUT_ROUNDS",
    "PROGRESS_INTERVAL",
    "ChangeKind",
    "LogGate",
    "ProgressGate",
    "ProgressSink",
    "RootsOption",
    "ServerRequests",
    "answer_input_requests",
    "connection_requests",
    "resolve_input_required",
    "roots_from",
    "server_logger",
]

logger = logging.getLogger(__name__)

_R = TypeVar("_R")

LOG_RATE = 50
"""Log messages per second (per session) passed on; the rest are dropped and counted."""

MAX_INPUT_ROUNDS = 10
"""Rounds of ``InputRequiredResult`` one request may take before it is given up."""

PROGRESS_INTERVAL = 0.1
"""Seconds between two progress reports passed on for one call (the last always passes)."""

_MAX_LOG_DATA_CHARS = 4000
_MAX_PROGRESS_MESSAGE_CHARS = 500
_STATE_ONLY_DELAYS = (0.05, 0.1, 0.2, 0.25)

ChangeKind = Literal["tools", "prompts", "resources"]

Sampler = Callable[
    [types.CreateMessageRequestParams],
    Awaitable[SamplingAnswer],
]
Elicitor = Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult | types.ErrorData]]

RootsOption = (
    Sequence[str | Path] | Callable[[], Sequence[str | Path] | Awaitable[Sequence[str | Path]]]
)
"""The directories (or ``file://`` URIs) the application lets servers work in: a list, or a
function returning one, called each time a server asks."""

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def server_logger(server: str) -> logging.Logger:
    """The Python logger that a server's log messages go to: ``glove_mcp.mcp_server.<id>``."""
    return logging.getLogger(f"glove_mcp.mcp_server.{server}")


async def roots_from(option: RootsOption) -> list[types.Root]:
    """The roots a server gets for ``roots/list``: paths become ``file://`` URIs named after
    their last part; URIs are kept as given."""
    given = option() if callable(option) else option
    if isinstance(given, Awaitable):
        given = await given
    return [_root(item) for item in given]


def _root(item: str | Path) -> types.Root:
    text = str(item)
    if "://" in text and not text.startswith("file://"):
        raise ValueError(f"roots are directories or file:// URIs, not {text!r}")
    if "://" in text:
        return types.Root(uri=text, name=text.rstrip("/").rsplit("/", 1)[-1] or None)
    # No filesystem access: a root names a place, it need not exist yet.
    path = Path(text).expanduser().absolute()
    return types.Root(uri=path.as_uri(), name=path.name or None)


class LogGate:
    """Lets at most ``rate`` messages a second through; counts the rest."""

    def __init__(self, rate: int = LOG_RATE, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._clock = clock
        self._window = -1.0
        self._passed = 0
        self.dropped = 0
        """Messages dropped since the last one let through."""

    def admit(self) -> bool:
        now = self._clock()
        if now - self._window >= 1.0:
            self._window, self._passed = now, 0
        if self._passed >= self._rate:
            self.dropped += 1
            return False
        self._passed += 1
        return True


ProgressSink = Callable[[float, float | None, str | None], Awaitable[None]]
"""``on_progress(progress, total, message)``: a call's progress as the server reports it."""


class ProgressGate:
    """The SDK's progress callback for one call: passes reports on to ``sink``, at most one
    per ``interval`` seconds except the one that reaches ``total``; drops reports that do not
    move forward (the spec says progress only grows) and cuts long messages, so a server that
    floods progress cannot flood the application."""

    def __init__(
        self,
        sink: ProgressSink | None,
        interval: float = PROGRESS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sink = sink
        self._interval = interval
        self._clock = clock
        self._last_time = float("-inf")
        self._last_progress = float("-inf")
        self.dropped = 0

    def sibling(self) -> ProgressGate:
        """A gate to the same sink with its own count: for a second sequence of reports (a
        task's statuses beside the server's own progress), which need not grow together."""
        return ProgressGate(self._sink, self._interval, self._clock)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self._sink is None:
            return
        now = self._clock()
        done = total is not None and progress >= total
        if progress <= self._last_progress or (not done and now - self._last_time < self._interval):
            self.dropped += 1
            return
        self._last_time, self._last_progress = now, progress
        if message is not None and len(message) > _MAX_PROGRESS_MESSAGE_CHARS:
            message = message[:_MAX_PROGRESS_MESSAGE_CHARS] + "…"
        await self._sink(progress, total, message)


def _bounded(data: Any) -> Any:
    """Log data as given, unless its text is too long to pass on whole."""
    text = data if isinstance(data, str) else repr(data)
    if len(text) <= _MAX_LOG_DATA_CHARS:
        return data
    return f"{text[:_MAX_LOG_DATA_CHARS]}… [{len(text) - _MAX_LOG_DATA_CHARS:,} characters cut]"


@dataclass(frozen=True, kw_only=True)
class ServerRequests:
    """How a session answers its server.

    Attributes:
        sampling: answers ``sampling/createMessage``; None refuses (and declares no sampling).
        elicitation: answers ``elicitation/create``; None refuses (and declares none).
        roots: the roots for ``roots/list``; None declares no roots.
        log_level: the level to ask the server to log at; None leaves the server's default.
        on_log: gets every log message let through (besides the server's Python logger).
        on_list_changed: told when the server says its tools, prompts or resources changed.
    """

    sampling: Sampler | None = None
    elicitation: Elicitor | None = None
    roots: RootsOption | None = None
    log_level: types.LoggingLevel | None = None
    on_log: Callable[[McpLog], Awaitable[None]] | None = None
    on_list_changed: Callable[[ChangeKind], Awaitable[None]] | None = None

    @property
    def asks_back(self) -> bool:
        """Whether the client declares anything a server may ask it (sampling, elicitation,
        roots): then a handshake-era server needs the standalone stream to ask outside a
        call."""
        return any(x is not None for x in (self.sampling, self.elicitation, self.roots))

    def callbacks(
        self,
        server: str,
        spawn: Callable[[Awaitable[None]], None],
        watch: TaskWatch | None = None,
    ) -> dict[str, Any]:
        """Keyword arguments for the SDK's ``ClientSession``. ``spawn`` runs a coroutine in
        the background (a list change is handled after the notification returns, so the
        session's read loop never waits on a re-listing that goes through it). ``watch``
        gets the progress and task status notifications of running tasks."""
        gate = LogGate()
        python_logger = server_logger(server)
        kwargs: dict[str, Any] = {"log_level": self.log_level}

        if self.sampling is not None:
            sampler = self.sampling

            async def sampling(
                ctx: ClientRequestContext, params: types.CreateMessageRequestParams
            ) -> SamplingAnswer:
                with server_request_span("sampling/createMessage", server, params.meta):
                    return await sampler(params)

            kwargs["sampling_callback"] = sampling
            kwargs["sampling_capabilities"] = SAMPLING_CAPABILITY
        if self.elicitation is not None:
            elicitor = self.elicitation

            async def elicitation(
                ctx: ClientRequestContext, params: types.ElicitRequestParams
            ) -> types.ElicitResult | types.ErrorData:
                with server_request_span("elicitation/create", server, params.meta):
                    return await elicitor(params)

            kwargs["elicitation_callback"] = elicitation
        if self.roots is not None:
            option = self.roots

            async def list_roots(
                ctx: ClientRequestContext,
            ) -> types.ListRootsResult | types.ErrorData:
                try:
                    with server_request_span("roots/list", server, ctx.meta):
                        return types.ListRootsResult(roots=await roots_from(option))
                except Exception as exc:
                    # The application's roots function failed: the server gets an error,
                    # never our traceback.
                    logger.warning("roots for MCP server %r failed: %s", server, exc)
                    return types.ErrorData(
                        code=types.INTERNAL_ERROR, message="the client could not list its roots"
                    )

            kwargs["list_roots_callback"] = list_roots

        on_log = self.on_log

        async def log(params: types.LoggingMessageNotificationParams) -> None:
            if not gate.admit():
                return
            dropped, gate.dropped = gate.dropped, 0
            data = _bounded(params.data)
            level = _LEVELS.get(params.level, logging.INFO)
            if dropped:
                python_logger.warning(
                    "MCP server %r sent too many log messages: %d dropped", server, dropped
                )
            python_logger.log(level, "%s%s", f"[{params.logger}] " if params.logger else "", data)
            if on_log is not None:
                await on_log(McpLog(server, params.level, params.logger, data))

        kwargs["logging_callback"] = log

        changed = self.on_list_changed

        async def message_handler(message: Any) -> None:
            if watch is not None and isinstance(
                message,
                types.ProgressNotification
                | types.TaskStatusNotification
                | types.SubscriptionsAcknowledgedNotification,
            ):
                seen = watch

                async def hand_over(note: Any = message) -> None:
                    await seen.deliver(note)

                spawn(hand_over())
                return
            kind: ChangeKind | None = None
            if isinstance(message, types.ToolListChangedNotification):
                kind = "tools"
            elif isinstance(message, types.PromptListChangedNotification):
                kind = "prompts"
            elif isinstance(message, types.ResourceListChangedNotification):
                kind = "resources"
            if kind is not None and changed is not None:
                spawn(changed(kind))

        kwargs["message_handler"] = message_handler
        return kwargs


async def resolve_input_required(
    session: ClientSession,
    first: types.InputRequiredResult | _R,
    retry: Callable[
        [types.InputResponses | None, str | None], Awaitable[types.InputRequiredResult | _R]
    ],
    *,
    max_rounds: int = MAX_INPUT_ROUNDS,
) -> _R:
    """Drive a multi-round-trip request (SEP-2322) to its result.

    While the server answers ``InputRequiredResult``, answer its input requests (elicitation,
    sampling, roots) through the session's own callbacks, all at once, and retry the request
    with the responses and the ``request_state`` echoed byte for byte (omitted when the server
    sent none). A round with no input requests waits a little before retrying. Each retry is a
    new request with its own id, and the state lives only in this call, so parallel calls never
    see each other's.

    Raises:
        MCPError: a callback refused an input request, or the server kept asking for more than
            ``max_rounds`` rounds.
    """
    current = first
    for round in range(max_rounds + 1):
        if not isinstance(current, types.InputRequiredResult):
            return current
        if round == max_rounds:
            break
        responses: types.InputResponses | None = None
        requests = current.input_requests or {}
        if requests:
            responses = await answer_input_requests(session, requests)
        else:
            await asyncio.sleep(_STATE_ONLY_DELAYS[min(round, len(_STATE_ONLY_DELAYS) - 1)])
        current = await retry(responses, current.request_state)
    raise MCPError(
        types.INTERNAL_ERROR,
        f"the server still asked for input after {max_rounds} rounds; giving up on the request",
    )


async def answer_input_requests(
    session: ClientSession, requests: dict[str, types.InputRequest]
) -> types.InputResponses:
    """Answer input requests (elicitation, sampling, roots) with the session's own handlers,
    all at once, keyed as asked.

    Raises:
        MCPError: a handler refused one (the others are cancelled).
    """

    async def answer(key: str, request: types.InputRequest) -> types.InputResponse:
        ctx = ClientRequestContext(session=session, request_id=key)
        response = await session.dispatch_input_request(ctx, request)
        if isinstance(response, types.ErrorData):
            raise MCPError.from_error_data(response)
        return response

    keys = list(requests)
    tasks = [asyncio.ensure_future(answer(k, requests[k])) for k in keys]
    try:
        answers = await asyncio.gather(*tasks)
    except BaseException:
        # One refused (or we were cancelled): a person need not answer the others.
        for task in tasks:
            task.cancel()
        raise
    return dict(zip(keys, answers, strict=True))


def connection_requests(
    namespace: str,
    sampling_model: ModelAdapter | None,
    on_elicitation: OnElicitation | None,
    roots: RootsOption | None,
    log_level: types.LoggingLevel | None,
) -> ServerRequests:
    """What a connection made by ``connect_mcp`` answers: only what it was given."""
    sampling = elicitation = None
    if sampling_model is not None:
        model = sampling_model

        async def sampling(
            params: types.CreateMessageRequestParams,
        ) -> SamplingAnswer:
            return await answer_sampling(namespace, params, model=model)

    if on_elicitation is not None:
        handler = on_elicitation

        async def elicitation(
            params: types.ElicitRequestParams,
        ) -> types.ElicitResult | types.ErrorData:
            return await answer_elicitation(
                namespace, params, on_elicitation=handler, display=None, server_mode=True
            )

    return ServerRequests(
        sampling=sampling, elicitation=elicitation, roots=roots, log_level=log_level
    )
