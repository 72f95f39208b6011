"""``glove-mcp serve`` stopping with streams open: Ctrl-C (SIGINT) or SIGTERM ends every open
stream with a final ``stopping`` item, aborts the turn in progress, and the process leaves
without a traceback — the command as a real process, its streams read over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from tests.glove_mcp.cli._commands import CLI, cli_env, write_catalogue

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


async def _items(
    lines: AsyncIterator[str], into: list[tuple[str, str]], ready: asyncio.Event
) -> None:
    name = ""
    async for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            into.append((name, line[6:]))
            if name == "ready":
                ready.set()


async def _stream(
    client: httpx2.AsyncClient,
    method: str,
    path: str,
    into: list[tuple[str, str]],
    ready: asyncio.Event,
    **kw: object,
) -> None:
    """Read a stream into ``into``; ``ready`` is set once it is open (a reply stream) or has
    sent its ``ready`` item (a follow stream)."""
    async with client.stream(method, path, **kw) as response:  # type: ignore[arg-type]
        assert response.status_code == 200
        if method == "POST":
            ready.set()
        await _items(response.aiter_lines(), into, ready)


@pytest.mark.parametrize(
    "signals",
    [[signal.SIGINT], [signal.SIGTERM], [signal.SIGINT, signal.SIGINT]],
    ids=["ctrl-c", "sigterm", "ctrl-c-twice"],
)
async def test_serve_ends_open_streams_and_stops_without_a_traceback(
    tmp_path: Path, signals: list[signal.Signals]
) -> None:
    script = tmp_path / "script.json"
    # A slow model: the reply stream is still open when the signal comes.
    script.write_text(json.dumps({"latency": 60, "replies": ["Too late."]}))
    write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    process = await asyncio.create_subprocess_exec(
        *CLI,
        "serve",
        "--port",
        "0",
        "--script",
        str(script),
        "--catalogue",
        str(tmp_path / "servers.toml"),
        "--db",
        str(tmp_path / "s.db"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(tmp_path, GLOVE_API_KEY="k" * 32),
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        base = re.search(r"(http://\S+)", line)
        assert base is not None, line
        async with httpx2.AsyncClient(
            base_url=base.group(1), headers={"Authorization": "Bearer " + "k" * 32}, timeout=60
        ) as client:
            session = (await client.post("/sessions")).json()["id"]
            follows: list[list[tuple[str, str]]] = [[], []]
            reply: list[tuple[str, str]] = []
            ready = [asyncio.Event(), asyncio.Event()]
            tasks = [
                asyncio.create_task(_stream(client, "GET", f"/sessions/{session}/events", f, r))
                for f, r in zip(follows, ready, strict=True)
            ]
            for event in ready:
                await asyncio.wait_for(event.wait(), 30)
            opened = asyncio.Event()
            path = f"/sessions/{session}/messages"
            tasks.append(
                asyncio.create_task(
                    _stream(client, "POST", path, reply, opened, json={"text": "hi"})
                )
            )
            await asyncio.wait_for(opened.wait(), 30)  # its turn waits on the slow model
            for sig in signals:
                process.send_signal(sig)
                await asyncio.sleep(0.05)
            # Every stream ends by itself, with its final item.
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
        status = await asyncio.wait_for(process.wait(), 30)
        err = (await process.stderr.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    for items in follows:
        assert items[-1][0] == "stopping"
        # The cursor to reconnect with: nothing saved is lost.
        assert json.loads(items[-1][1]) == {"after": sum(n == "message" for n, _ in items)}
    assert reply[-1] == ("stopping", "{}")
    assert "Traceback" not in err, err
    assert "Cancel" not in err and "ASGI" not in err, err
    assert status == (130 if signals[0] == signal.SIGINT else 0), (status, err)
