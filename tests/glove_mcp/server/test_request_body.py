"""Issue 16, item 17: bad input got a 500 or a traceback in the log.

100k-deep JSON raised RecursionError (500); ``{"text": "\\ud800"}`` (valid JSON, but a lone
surrogate no UTF-8 store can save) was an internal error; a client closing the connection
mid-body was logged at ERROR with a traceback each time. Now each gets a 4xx naming the
problem and exactly one log line, at INFO, without a traceback; nothing is saved.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from glove_mcp.server import ACCESS_LOGGER as ACCESS
from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import KEY, running, simple_factory

DEEP = 100_000


class Arrivals(logging.Handler):
    """Wakes the test when the server logs a line (from uvicorn's event loop thread)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.loop, self.arrived = loop, asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.loop.call_soon_threadsafe(self.arrived.set)


async def test_bad_bodies_get_a_4xx_and_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    cases: list[tuple[str, bytes, str]] = [
        ("/sessions/s1/messages", b'{"text": ' + b"[" * DEEP + b"]" * DEEP + b"}", "deeper"),
        ("/sessions/s1/messages", b'{"text": ' + b"[" * 65 + b"]" * 65 + b"}", "deeper than 64"),
        ("/sessions/s1/messages", b'{"text": "\\ud800"}', "lone UTF-16 surrogate"),
        ("/sessions/s1/messages", b'{"text": "ok", "\\udfff": 1}', "lone UTF-16 surrogate"),
        (
            "/sessions/s1/events",
            b'{"id": "e1", "source": "s", "kind": "k", "content": "\\ud83d"}',
            "surrogate",
        ),
        ("/sessions", b'{"id": "\\ud800"}', "surrogate"),
    ]
    async with running(server) as client:
        assert (await client.post("/sessions", json={"id": "s1"})).status_code == 201
        for path, body, text in cases:
            caplog.clear()
            with caplog.at_level(logging.INFO):
                answer = await client.post(path, content=body)
            assert answer.status_code == 400, (path, answer.text)
            assert text in answer.json()["error"]
            ours = [
                r for r in caplog.records if r.name.startswith("glove_mcp") and r.name != ACCESS
            ]
            assert len(ours) == 1 and ours[0].levelno == logging.INFO, ours
            assert all(r.exc_info is None and r.levelno < logging.ERROR for r in caplog.records)
        history = (await client.get("/sessions/s1")).json()
        assert history["messages"] == []  # nothing bad was saved


async def test_a_client_gone_mid_body_is_one_info_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    arrivals = Arrivals(asyncio.get_running_loop())
    logging.getLogger("glove_mcp.server").addHandler(arrivals)
    try:
        async with running(server) as client:
            await client.post("/sessions", json={"id": "s1"})
            host, port = client.base_url.host, client.base_url.port
            assert port is not None
            caplog.clear()
            arrivals.arrived.clear()
            with caplog.at_level(logging.INFO):
                for _ in range(3):
                    _, writer = await asyncio.open_connection(host, port)
                    writer.write(
                        f"POST /sessions/s1/messages HTTP/1.1\r\nhost: x\r\nauthorization: "
                        f'Bearer {KEY}\r\ncontent-length: 1000\r\n\r\n{{"text": '.encode()
                    )
                    await writer.drain()
                    writer.close()
                    await writer.wait_closed()
                    await asyncio.wait_for(arrivals.arrived.wait(), 10)
                    arrivals.arrived.clear()
            ours = [
                r for r in caplog.records if r.name.startswith("glove_mcp") and r.name != ACCESS
            ]
            assert len(ours) == 3, ours
            gone = "closed the connection before the body ended"
            assert all(gone in r.getMessage() for r in ours)
            assert all(r.levelno == logging.INFO and r.exc_info is None for r in caplog.records)
            assert (await client.get("/sessions/s1")).json()["messages"] == []
    finally:
        logging.getLogger("glove_mcp.server").removeHandler(arrivals)
