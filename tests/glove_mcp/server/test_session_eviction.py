"""Issue 16, item 2: the headless server never released a session.

Every session kept its Glove, MCP mount and SQLite connections open forever: under
``ulimit -n 256`` the server served 122 sessions, then failed every request and wrote 43 MB of
"Too many open files" to its log within seconds. Now idle sessions are closed (least recently
used first, beyond ``--max-sessions``) and reopened from the database on their next request;
a busy session is never closed; a server out of descriptors anyway answers 503 and logs one
line.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2

from glove_core import tool
from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import (
    AUTH,
    KEY,
    running,
    serve_process,
    simple_factory,
    sse_events,
)

LIMIT = 64  # descriptors: without eviction the server runs out after about 8 sessions
SESSIONS = 100


async def test_many_more_sessions_than_the_file_limit_allows(tmp_path: Path) -> None:
    async with (
        serve_process(tmp_path, "--max-sessions", "4", nofile=LIMIT) as server,
        httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client,
    ):
        for index in range(SESSIONS):
            created = await client.post("/sessions", json={"id": f"s{index}"})
            assert created.status_code == 201, created.text
            reply = await client.post(f"/sessions/s{index}/messages", json={"text": "one"})
            assert sse_events(reply.text)[-1][0] == "final", reply.text
        # The first sessions were closed long ago; they reopen from the database and go on.
        for index in range(3):
            reply = await client.post(f"/sessions/s{index}/messages", json={"text": "two"})
            assert sse_events(reply.text)[-1] == ("final", sse_events(reply.text)[-1][1])
            history = (await client.get(f"/sessions/s{index}")).json()["messages"]
            assert [m.get("text") for m in history] == ["one", "ok", "two", "ok"]
    assert server.log.read_text() == ""  # nothing went wrong, nothing was logged


async def test_out_of_descriptors_answers_503_and_logs_one_line(tmp_path: Path) -> None:
    # Eviction disabled: the old behaviour's descriptor use, to reach the limit on purpose.
    async with (
        serve_process(tmp_path, "--max-sessions", "100000", nofile=LIMIT) as server,
        httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client,
    ):
        statuses = []
        for index in range(40):
            statuses.append((await client.post("/sessions", json={"id": f"s{index}"})).status_code)
        refused = await client.post("/sessions", json={"id": "late"})
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "5"
        assert "retry" in refused.json()["error"]
        assert statuses.count(201) < 40 and set(statuses) <= {201, 503}
    lines = server.log.read_text().splitlines()
    assert len(lines) <= 2, lines[:5]  # one line per 10 s, not a traceback per attempt
    assert all("out of file descriptors" in line for line in lines), lines
    assert "Traceback" not in server.log.read_text()


@tool
async def wait_for_release() -> str:
    """Waits until the test lets it go."""
    started.set()
    await release.wait()
    return "released"


started = asyncio.Event()
release = asyncio.Event()


async def test_a_session_mid_turn_is_never_closed(tmp_path: Path) -> None:
    started.clear()
    release.clear()
    closed: list[str] = []

    def replies(session_id: str) -> list[object]:
        from glove_core import ToolCall

        if session_id == "busy":
            return [[ToolCall(id="c1", name="wait_for_release", input={})], "done"]
        return ["ok"] * 4

    factory = simple_factory(replies, tools=(wait_for_release,), closed=closed)
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, factory, max_sessions=1)
    async with running(server) as client:
        await client.post("/sessions", json={"id": "busy"})
        turn = asyncio.create_task(client.post("/sessions/busy/messages", json={"text": "go"}))
        await asyncio.wait_for(started.wait(), 10)
        for index in range(3):  # each needs room under max_sessions=1
            assert (await client.post("/sessions", json={"id": f"o{index}"})).status_code == 201
        assert "busy" not in closed  # mid-turn, stream open: kept
        assert closed == ["o0", "o1"]  # idle ones made room, least recently used first
        release.set()
        reply = await asyncio.wait_for(turn, 10)
        assert sse_events(reply.text)[-1][1]["text"] == "done"
        assert (await client.post("/sessions", json={"id": "after"})).status_code == 201
        assert "busy" in closed  # idle now: closed to make room
        history = (await client.get("/sessions/busy")).json()["messages"]
        assert [m["sender"] for m in history] == ["user", "agent", "user", "agent"]
        assert server.open_sessions == 1
