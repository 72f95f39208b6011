"""The local test servers themselves: switches and the subprocess runner."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

import httpx2
import pytest

from glove_mcp import bearer, connect_mcp
from glove_mcp.testing import McpTestServer, ServerControl, build_server, serve, spawn_server


async def test_subprocess_server_serves_tools() -> None:
    async with spawn_server("tracker", tokens=["k"]) as url:
        assert url.startswith("http://127.0.0.1:")
        async with await connect_mcp("tracker", url, auth=bearer("k")) as conn:
            names = {t.name for t in await conn.list_tools()}
            result = await conn.call_tool("list_issues", {})
    assert names == {"create_issue", "delete_issue", "list_issues", "update_issue"}
    assert result.structured_content is not None
    assert result.structured_content["issues"][0]["id"] == "ENG-1"


async def test_bearer_check_answers_401_with_a_challenge() -> None:
    control = ServerControl(tokens=lambda token: token.startswith("ok-"))
    async with serve("notes", control=control) as url, httpx2.AsyncClient() as client:
        bad = await client.post(url, json={}, headers={"Authorization": "Bearer nope"})
        missing = await client.post(url, json={})
    assert bad.status_code == missing.status_code == 401
    assert bad.headers["www-authenticate"].startswith("Bearer")
    assert control.seen_tokens == ["nope", None]


async def test_expired_session_gets_404() -> None:
    control = ServerControl()
    async with serve("notes", control=control) as url:
        async with await connect_mcp("notes", url, protocol="legacy"):
            assert control.expire_sessions() == 1
        assert control.expire_sessions() == 0


async def test_legacy_only_rejects_discover_as_a_1x_server_does() -> None:
    control = ServerControl(legacy_only=True, connect_latency=0.01)
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    async with serve("notes", control=control) as url, httpx2.AsyncClient() as client:
        answer = await client.post(url, json=discover)
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == "Bad Request: Missing session ID"
    assert control.handshakes == control.discovers == 1


async def test_server_keeps_its_port_across_restarts() -> None:
    server = McpTestServer("paged")
    url = await server.start()
    await server.stop()
    assert not server.running
    assert await server.start() == url
    await server.stop()


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown test server 'nope'"):
        build_server("nope")  # type: ignore[arg-type]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm", "stdin"])
async def test_the_subprocess_server_stops_quietly_mid_request(stop: str) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "glove_mcp.testing",
        "tracker",
        "--latency",
        "5",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    try:
        url = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().strip()
        conn = await connect_mcp("tracker", url)
        # A tool call still running when the server is told to stop: its request is cut.
        call = asyncio.create_task(conn.call_tool("list_issues", {}))
        await asyncio.sleep(0.5)
        if stop == "ctrl-c":
            process.send_signal(signal.SIGINT)
        elif stop == "sigterm":
            process.terminate()
        else:
            process.stdin.close()
        status = await asyncio.wait_for(process.wait(), 30)  # Ctrl-C used to hang here
        err = (await process.stderr.read()).decode()
        call.cancel()
        with contextlib.suppress(BaseException):
            await conn.aclose()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert status == 0
    assert err == ""  # no "Cancel 1 running task(s)", no traceback
