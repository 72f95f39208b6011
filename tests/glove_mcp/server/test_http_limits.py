"""Issue 16, item 3: slow clients held the server.

uvicorn has no deadline for reading a request: 100 connections sending headers only stayed
open past 40 s, and no connection cap stopped a crowd of them. Now a connection must send its
request head within ``--header-timeout`` (else 408 and close; one that sent nothing is just
closed), a body must arrive within ``--body-timeout`` (else 408), and beyond
``--max-connections`` requests get 503 — while real requests still get through.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest

from glove_mcp.cli import main
from glove_mcp.server import HttpLimits
from tests.glove_mcp.server._harness import AUTH, KEY, serve_process

HOLD = 30  # seconds the test waits at most for the server to close a connection (not a timing)


async def test_slow_loris_connections_are_closed_and_real_requests_go_through(
    tmp_path: Path,
) -> None:
    flags = ("--header-timeout", "0.5", "--body-timeout", "0.5")
    async with serve_process(tmp_path, *flags) as server:
        heads = []
        for _ in range(20):  # headers that never end
            reader, writer = await asyncio.open_connection(server.host, server.port)
            writer.write(b"POST /sessions HTTP/1.1\r\nhost: x\r\nx-slow: 1\r\n")
            heads.append((reader, writer))
        silent = await asyncio.open_connection(server.host, server.port)  # sends nothing
        trickle_reader, trickle = await asyncio.open_connection(server.host, server.port)
        trickle.write(
            b"POST /sessions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer "
            + KEY.encode()
            + b"\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"
        )
        async with httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client:
            assert (await client.post("/sessions", json={"id": "real"})).status_code == 201
        for reader, _ in heads:
            answer = await asyncio.wait_for(reader.read(), HOLD)  # read() returns at close
            assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert await asyncio.wait_for(silent[0].read(), HOLD) == b""
        answer = await asyncio.wait_for(trickle_reader.read(), HOLD)
        assert answer.startswith(b"HTTP/1.1 408 ") and b"body took longer than 0.5 s" in answer
        for _, writer in [*heads, silent, (trickle_reader, trickle)]:
            writer.close()
    assert server.log.read_text() == ""


async def test_connections_beyond_the_cap_get_503(tmp_path: Path) -> None:
    flags = ("--max-connections", "4", "--header-timeout", "1")
    async with serve_process(tmp_path, *flags) as server:
        idle = [await asyncio.open_connection(server.host, server.port) for _ in range(4)]
        async with httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client:
            for _ in range(5):
                refused = await client.post("/sessions")
                assert refused.status_code == 503
            # The idle ones are closed by the header deadline; then there is room again.
            for reader, _ in idle:
                assert await asyncio.wait_for(reader.read(), HOLD) == b""
            assert (await client.post("/sessions")).status_code == 201
        for _, writer in idle:
            writer.close()
    refusals = server.log.read_text().splitlines()
    assert len(refusals) == 1 and "Exceeded concurrency limit." in refusals[0]  # not one each


def test_limits_are_validated_and_speak_in_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="header_timeout must be more than 0 seconds, got 0"):
        HttpLimits(header_timeout=0)
    with pytest.raises(ValueError, match="max_connections must be 1 or more, got 0"):
        HttpLimits(max_connections=0)
    with pytest.raises(SystemExit):
        main(["serve", "--header-timeout", "0"])
    err = capsys.readouterr().err
    assert "argument --header-timeout: must be more than 0, got 0" in err
