"""The headless server for tests: in this process (``running``, with a simple agent factory),
or as a real ``glove-mcp serve`` child process (``serve_process``) where the test needs a
process of its own (a low file-descriptor limit, a restart on the same database)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import uvicorn

from glove_core import Glove, ScriptedModel, Tool
from glove_mcp.server import HeadlessServer, HttpLimits, SessionStore, uvicorn_config

KEY = "serve-test-key-long-enough"
AUTH = {"Authorization": f"Bearer {KEY}"}


def sse_events(body: str) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of a Server-Sent Events body."""
    events = []
    for frame in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def simple_factory(
    replies: Callable[[str], list[Any]] = lambda session_id: ["ok"] * 10,
    *,
    tools: tuple[Tool, ...] = (),
    closed: list[str] | None = None,
) -> Callable[[str, SessionStore, AsyncExitStack], Glove]:
    """An agent factory: a ScriptedModel with ``replies(session_id)`` and ``tools``; each
    session's id is appended to ``closed`` when the server closes what the factory opened."""

    def build(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        glove = Glove(
            model=ScriptedModel(replies(session_id)),
            system_prompt="headless",
            store=store,
            server_mode=True,
        )
        for tool in tools:
            glove.fold(tool)
        if closed is not None:
            stack.callback(closed.append, session_id)
        return glove

    return build


class _Uvicorn(uvicorn.Server):
    """uvicorn in the test's loop: no signal capture; ``ready`` is set once it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@asynccontextmanager
async def running(
    server: HeadlessServer,
    limits: HttpLimits | None = None,
    wrap: Callable[[Any], Any] | None = None,
) -> AsyncIterator[httpx2.AsyncClient]:
    """Serve ``server.app`` on loopback as ``glove-mcp serve`` does (``uvicorn_config``), in
    this process; yield a client with the right key; shut the server down after. ``wrap``
    wraps the app first (as ``serve`` does with the otel extra: ``instrument_asgi``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = server.app if wrap is None else wrap(server.app)
    config = uvicorn_config(app, limits, log_level="warning", lifespan="on", access_log=False)
    runner = _Uvicorn(config)
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    ready = asyncio.create_task(runner.ready.wait())
    await asyncio.wait([task, ready], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        ready.cancel()
        await task
        raise RuntimeError("the headless server stopped during startup")
    try:
        base = f"http://127.0.0.1:{port}"
        async with httpx2.AsyncClient(base_url=base, timeout=30, headers=AUTH) as client:
            yield client
    finally:
        runner.should_exit = True
        await task
        sock.close()
        await server.aclose()


@dataclass
class ServeProcess:
    """A running server: its base URL, the process, and the file its log goes to."""

    url: str
    host: str
    port: int
    process: asyncio.subprocess.Process
    log: Path


def _limit_files(nofile: int | None) -> Callable[[], None] | None:
    if nofile is None:
        return None

    def preexec() -> None:  # runs in the child, before exec
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    return preexec


@asynccontextmanager
async def serve_process(
    folder: Path,
    *flags: str,
    script: list[Any] | dict[str, Any] | None = None,
    nofile: int | None = None,
    db: Path | None = None,
    name: str = "serve",
    database: str | None = None,
    catalogue_text: str | None = None,
) -> AsyncIterator[ServeProcess]:
    """Start ``glove-mcp serve --port 0`` with an offline script (every session gets a fresh
    copy) and a catalogue whose one server is never activated; stop it on exit.

    Args:
        folder: where the catalogue, script, database and log go.
        flags: more ``serve`` flags.
        script: the ScriptedModel replies (default: ten "ok" replies).
        nofile: the child's ``ulimit -n``.
        db: the database (default ``folder / "server.db"``).
        name: distinguishes the log files of several processes in one folder.
        database: a ``postgresql://`` URL: ``--database`` instead of ``--db``.
        catalogue_text: the catalogue TOML (default: one server, never activated).
    """
    catalogue = folder / f"{name}-servers.toml"
    catalogue.write_text(
        catalogue_text
        or '[[servers]]\nid = "idle"\nname = "Idle"\ndescription = "Never activated."\n'
        'url = "http://127.0.0.1:9/mcp"\n',
        encoding="utf-8",
    )
    script_file = folder / f"{name}-script.json"
    script_file.write_text(json.dumps(script if script is not None else ["ok"] * 10))
    where = ("--database", database) if database else ("--db", str(db or folder / "server.db"))
    log = folder / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(GLOVE_HOME=str(folder), GLOVE_API_KEY=KEY, PYTHONUNBUFFERED="1")
    with log.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "glove_mcp.cli", "serve", "--port", "0"),
            *("--script", str(script_file), "--catalogue", str(catalogue)),
            *where,
            *flags,
            stdout=asyncio.subprocess.PIPE,
            stderr=log_file,
            env=env,
            preexec_fn=_limit_files(nofile),
        )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.search(r"http://([\d.]+):(\d+)", line)
        assert found is not None, (line, log.read_text())
        host, port = found.group(1), int(found.group(2))
        yield ServeProcess(f"http://{host}:{port}", host, port, process, log)
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
