"""The headless server's access log: one line per request, on logger ``glove_mcp.access``.

Each line is ``METHOD PATH STATUS BYTESB DURATIONms``, written at INFO when the response has
been sent (for a stream, when it ends): the path without its query string, the status, the
body bytes sent and the time from the request's arrival. Headers (the API key), query strings
and bodies are never logged. ``glove-mcp serve --access-log`` shows the lines on stderr; an
application configures the logger as it likes.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ACCESS_LOGGER", "AccessLog"]

ACCESS_LOGGER = "glove_mcp.access"
"""The logger's name."""

logger = logging.getLogger(ACCESS_LOGGER)


class AccessLog:
    """ASGI middleware writing the access log line of every HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        sent: dict[str, Any] = {"status": 500, "bytes": 0}

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent["status"] = message["status"]
            elif message["type"] == "http.response.body":
                sent["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting)
        finally:
            logger.info(
                "%s %s %d %dB %.1fms",
                scope["method"],
                # Percent-decoded by the server; control characters would forge log lines.
                scope["path"].encode("unicode_escape").decode("ascii")[:300],
                sent["status"],
                sent["bytes"],
                (time.perf_counter() - started) * 1000,
            )
