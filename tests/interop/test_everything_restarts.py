"""Interop: recovery when server-everything (Streamable HTTP) restarts, and what a refused
connect says.

server-everything is a TypeScript-SDK server: after a restart it answers the old session id with
HTTP 400 and ``-32000 "Bad Request: No valid session ID provided"`` (not the specification's
404). The request never ran, so the connection opens a new session and sends it again, whatever
the tool.
"""

from __future__ import annotations

import asyncio
import os
import queue
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
import uvicorn

from glove_mcp.connect.connection import McpServerConnection, connect_mcp
from glove_mcp.errors import GloveMcpError
from tests.interop.test_server_everything import EVERYTHING, HERE, LOOPBACK, NODE, _wait_for_port

SERVER = "everything"


class Restartable:
    """server-everything over Streamable HTTP on 127.0.0.1, stopped and started again on the
    same port."""

    def __init__(self) -> None:
        self.port = 0
        self.process: subprocess.Popen[str] | None = None
        self.log: list[str] = []

    def start(self) -> None:
        env = {"PATH": os.environ.get("PATH", os.defpath), "PORT": str(self.port)}
        process = subprocess.Popen(
            [str(NODE), "--require", str(LOOPBACK), str(EVERYTHING), "streamableHttp"],
            cwd=HERE,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                self.log.append(line)
                lines.put(line)
            lines.put(None)

        self.pump = threading.Thread(target=pump, daemon=True)
        self.pump.start()
        self.process = process
        self.port = _wait_for_port(lines, self.log)

    def stop(self) -> None:
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        self.pump.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
        self.process = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@pytest.fixture
def server() -> Iterator[Restartable]:
    running = Restartable()
    running.start()
    try:
        yield running
    finally:
        running.stop()


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[McpServerConnection]:
    connection = await connect_mcp(SERVER, url, protocol="legacy")
    try:
        yield connection
    finally:
        await connection.close()


def _text(result: object) -> str:
    content = getattr(result, "content", ())
    return "".join(getattr(block, "text", "") for block in content)


async def test_a_call_after_the_server_restarted_opens_a_new_session(server: Restartable) -> None:
    async with connected(server.url) as connection:
        assert _text(await connection.call_tool("echo", {"message": "before"})) == "Echo: before"
        server.stop()
        server.start()  # same port; it knows no session
        # Not idempotent, but refused before it ran (400 "No valid session ID"): sent again.
        after = await connection.call_tool("get-sum", {"a": 1, "b": 2})
        assert _text(after) == "The sum of 1 and 2 is 3."
        assert connection.reconnects == 1
        assert _text(await connection.call_tool("echo", {"message": "again"})) == "Echo: again"
        assert connection.reconnects == 1


# -- a refused connect ---------------------------------------------------------------------------


class _HostCheck:
    """An ASGI app that refuses every request the way ``@playwright/mcp`` does when reached
    as 127.0.0.1 instead of localhost: 403, text/plain, "Access is only allowed at ..."."""

    def __init__(self) -> None:
        self.port = 0

    async def __call__(self, scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        if scope["type"] != "http":
            return
        body = f"Access is only allowed at localhost:{self.port}\nsecond line".encode()
        await send(  # type: ignore[operator]
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": body})  # type: ignore[operator]


async def test_a_refused_connect_says_the_status_and_the_first_line() -> None:
    app = _HostCheck()
    # Bound and listening before uvicorn starts: a connect waits in the backlog meanwhile.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    app.port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    try:
        url = f"http://user:hunter2@127.0.0.1:{app.port}/mcp?token=s3cret"
        with pytest.raises(GloveMcpError) as refused:
            await connect_mcp(SERVER, url, connect_timeout=10)
        message = str(refused.value)
        assert f"HTTP 403: Access is only allowed at localhost:{app.port}" in message
        assert "second line" not in message
        assert "hunter2" not in message and "s3cret" not in message
    finally:
        web.should_exit = True
        await serving
        sock.close()
