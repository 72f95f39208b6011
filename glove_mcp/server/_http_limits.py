"""The headless server's connection limits, and the uvicorn configuration that applies them.

uvicorn (0.54 here) closes a keep-alive connection that stays idle, answers 503 once too many
connections are open and refuses over-large headers, but it has no deadline for *reading* a
request: a client that sends its headers one byte a minute keeps its connection (and a file
descriptor) forever. ``_DeadlineH11Protocol`` adds that deadline: a connection must send a
complete request head within ``header_timeout`` seconds of opening, or of the previous
response; otherwise it gets ``408`` (or, if it sent nothing, is just closed). The body has its
own deadline, kept by the app (``HeadlessServer(body_timeout=)``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from glove_mcp.server._out_of_files import descriptor_share

__all__ = ["HttpLimits", "default_max_connections", "uvicorn_config"]

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 39\r\n\r\nthe request headers took too long; bye\n"
)


def default_max_connections() -> int:
    """Half the process's file-descriptor limit (``ulimit -n``), between 16 and 1000: the other
    half is left for sessions' databases, MCP connections and the model client."""
    return descriptor_share(2, low=16)


@dataclass(frozen=True)
class HttpLimits:
    """Limits on the HTTP connections of ``glove-mcp serve`` (``uvicorn_config``).

    Raises:
        ValueError: a field is out of its range (the message names it).
    """

    header_timeout: float = 10.0
    """Seconds a connection has to send a complete request head (line and headers), counted
    from when it opens or from the previous response; then ``408`` and close. More than 0."""
    keep_alive: int = 5
    """Seconds an idle keep-alive connection stays open after a response. 1 or more."""
    max_connections: int | None = None
    """Open connections (and requests in progress) beyond which new requests get ``503``;
    ``None``: ``default_max_connections()``, half of ``ulimit -n``. 1 or more."""
    max_header_bytes: int = 16 * 1024
    """Bytes of request line and headers; more gets ``400``. 1024 or more."""
    graceful_shutdown: int = 10
    """Seconds a shutdown waits for requests in progress before closing them. 0 or more."""

    def __post_init__(self) -> None:
        checks: list[tuple[str, float | None, float, str]] = [
            ("header_timeout", self.header_timeout, 0, "more than 0 seconds"),
            ("keep_alive", self.keep_alive, 1, "1 or more seconds"),
            ("max_connections", self.max_connections, 1, "1 or more"),
            ("max_header_bytes", self.max_header_bytes, 1024, "1024 or more"),
            ("graceful_shutdown", self.graceful_shutdown, 0, "0 or more seconds"),
        ]
        for name, value, low, allowed in checks:
            if value is None:
                continue
            if value < low or (name == "header_timeout" and value <= 0):
                raise ValueError(f"{name} must be {allowed}, got {value}")


class _DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head (see the module doc)."""

    header_timeout: float = HttpLimits.header_timeout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_after: object = None  # the cycle before the awaited request
        self._heard = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        self._heard = True
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        if self.transport.is_closing():
            return
        self._waiting_after, self._heard = self.cycle, False
        self._deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        cycle = self.cycle
        waiting = cycle is self._waiting_after and (cycle is None or cycle.response_complete)
        if not waiting or self.transport.is_closing():
            return  # a request arrived (and is being answered) in time
        if self._heard:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def uvicorn_config(app: Any, limits: HttpLimits | None = None, **options: Any) -> uvicorn.Config:
    """A ``uvicorn.Config`` for ``app`` with ``limits`` applied (defaults when None).

    Args:
        app: the ASGI app (``HeadlessServer.app``).
        limits: the connection limits.
        **options: other ``uvicorn.Config`` arguments (``log_level=``, …).
    """
    limits = limits or HttpLimits()
    protocol = type(
        "DeadlineH11Protocol", (_DeadlineH11Protocol,), {"header_timeout": limits.header_timeout}
    )
    max_connections = limits.max_connections or default_max_connections()
    return uvicorn.Config(
        app,
        http=protocol,
        timeout_keep_alive=limits.keep_alive,
        limit_concurrency=max_connections,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        timeout_graceful_shutdown=limits.graceful_shutdown,
        **options,
    )
