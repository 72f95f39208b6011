"""Serve an ASGI app with uvicorn on 127.0.0.1, on a free port, inside the current event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Generator
from typing import Any

import uvicorn

__all__ = ["raise_server_errors", "serve_asgi"]

logger = logging.getLogger(__name__)


class _QuietServer(uvicorn.Server):
    # uvicorn installs SIGINT/SIGTERM handlers while it serves; a test helper must leave the
    # process's signal handling alone.
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class _DropFilter(logging.Filter):
    """Hides uvicorn's traceback for connections a fake drops on purpose."""

    def __init__(self, quiet: tuple[type[BaseException], ...]) -> None:
        super().__init__()
        self.quiet = quiet

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (exc is not None and isinstance(exc, self.quiet))


@contextlib.asynccontextmanager
async def serve_asgi(
    app: Any, *, quiet_exceptions: tuple[type[BaseException], ...] = ()
) -> AsyncIterator[str]:
    """Serve ``app`` on ``127.0.0.1`` (port chosen by the OS) until the block exits.

    The listening socket is bound and listening before the server task starts, so a client may
    connect at once: the kernel queues the connection until uvicorn accepts it. TCP_NODELAY is
    set, without which every small response waits ~40 ms for a delayed ACK.

    Args:
        app: any ASGI application.
        quiet_exceptions: exceptions the app raises on purpose (to drop a connection) whose
            traceback uvicorn should not log.

    Yields:
        The base URL, e.g. ``http://127.0.0.1:51234``.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = _QuietServer(config)
    uvicorn_log = logging.getLogger("uvicorn.error")
    drop_filter = _DropFilter(quiet_exceptions)
    uvicorn_log.addFilter(drop_filter)
    task = asyncio.create_task(server.serve(sockets=[sock]), name=f"fake-api:{port}")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        # Streams a test left hanging must not hold shutdown for the graceful timeout.
        server.force_exit = True
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            sock.close()
            uvicorn_log.removeFilter(drop_filter)


def raise_server_errors(errors: list[Exception]) -> None:
    """Fail with the first exception a fake raised while handling a request, if any.

    Raises:
        RuntimeError: chained from that exception.
    """
    if errors:
        first = errors[0]
        raise RuntimeError(f"the fake API raised while handling a request: {first!r}") from first
