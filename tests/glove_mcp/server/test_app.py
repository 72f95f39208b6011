"""Headless server mode over real HTTP: sessions, streaming, events, restarts, bad input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from glove_core import Glove, ModelRequest, ScriptedModel, SqliteStore, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.connect import McpClientPool
from glove_mcp.server import HeadlessServer, SessionStore
from glove_mcp.testing import McpTestServer, serve
from tests.glove_mcp.server._harness import sse_events

KEY = "test-api-key-long-enough-1"
AUTH = {"Authorization": f"Bearer {KEY}"}


@asynccontextmanager
async def running(server: HeadlessServer) -> AsyncIterator[httpx2.AsyncClient]:
    async with McpTestServer(lambda: server.app, path="") as http:
        base = http.url.rstrip("/")
        async with httpx2.AsyncClient(base_url=base, timeout=30) as client:
            yield client
    await server.aclose()


ScriptFactory = Callable[[str], list[Any]]


def factory_for(
    tracker_url: str, pool: McpClientPool, script: ScriptFactory
) -> Callable[[str, SessionStore, AsyncExitStack], Any]:
    entries = [
        McpCatalogueEntry(
            id="tracker", name="Tracker", url=tracker_url, description="Issues in a bug tracker."
        )
    ]

    async def build(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        glove = Glove(
            model=ScriptedModel(script(session_id)),
            system_prompt="headless",
            store=store,
            server_mode=True,
        )
        mount = await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter(session_id, active=["tracker"]),
            entries=entries,
            pool=pool,
        )
        stack.push_async_callback(mount.aclose)
        return glove

    return build


def one_mcp_call(session_id: str) -> list[Any]:
    return [
        [ToolCall(id=f"{session_id}-c1", name="tracker__list_issues", input={})],
        f"{session_id}: there are issues.",
    ]


@pytest.fixture
async def tracker() -> AsyncIterator[str]:
    async with serve("tracker") as url:
        yield url


async def test_session_lifecycle_and_streamed_reply(tracker: str, tmp_path: Path) -> None:
    pool = McpClientPool()
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, factory_for(tracker, pool, one_mcp_call))
    async with running(server) as client:
        created = await client.post("/sessions", headers=AUTH, json={"id": "s1"})
        assert created.status_code == 201 and created.json() == {"id": "s1"}
        reply = await client.post("/sessions/s1/messages", headers=AUTH, json={"text": "hi"})
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = sse_events(reply.text)
        names = [name for name, _ in events]
        assert names == ["tool_use", "tool_result", "text_delta", "final"]
        assert events[1][1]["name"] == "tracker__list_issues"
        assert events[1][1]["status"] == "success"
        assert events[-1][1]["text"] == "s1: there are issues."
        history = (await client.get("/sessions/s1", headers=AUTH)).json()
        assert [m["sender"] for m in history["messages"]] == ["user", "agent", "user", "agent"]
        duplicate = await client.post("/sessions", headers=AUTH, json={"id": "s1"})
        assert duplicate.status_code == 409
    await pool.aclose()


async def test_event_wakes_the_agent(tracker: str, tmp_path: Path) -> None:
    woke = asyncio.Event()

    def script(session_id: str) -> list[Any]:
        def reply(request: ModelRequest) -> str:
            woke.set()
            return "saw the deploy"

        return [reply]

    pool = McpClientPool()
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, factory_for(tracker, pool, script))
    async with running(server) as client:
        await client.post("/sessions", headers=AUTH, json={"id": "s1"})
        answer = await client.post(
            "/sessions/s1/events",
            headers=AUTH,
            json={
                "id": "d1",
                "source": "ci",
                "kind": "deploy",
                "content": "done",
                "when_idle": "wake",
            },
        )
        assert answer.json() == {"disposition": "woke"}
        await asyncio.wait_for(woke.wait(), 10)
        again = await client.post(
            "/sessions/s1/events",
            headers=AUTH,
            json={"id": "d1", "source": "ci", "kind": "deploy", "content": "done"},
        )
        assert again.json() == {"disposition": "duplicate"}
    await pool.aclose()


async def test_sessions_survive_a_restart(tracker: str, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    pool = McpClientPool()

    def script(session_id: str) -> list[Any]:
        return ["first answer", "second answer"]

    first = HeadlessServer(db, KEY, factory_for(tracker, pool, script))
    async with running(first) as client:
        await client.post("/sessions", headers=AUTH, json={"id": "keep"})
        await client.post("/sessions/keep/messages", headers=AUTH, json={"text": "one"})

    second = HeadlessServer(db, KEY, factory_for(tracker, pool, lambda s: ["after restart"]))
    async with running(second) as client:
        history = (await client.get("/sessions/keep", headers=AUTH)).json()
        assert [m["text"] for m in history["messages"]] == ["one", "first answer"]
        reply = await client.post("/sessions/keep/messages", headers=AUTH, json={"text": "two"})
        assert sse_events(reply.text)[-1] == (
            "final",
            {"text": "after restart", "usage": sse_events(reply.text)[-1][1]["usage"]},
        )
        history = (await client.get("/sessions/keep", headers=AUTH)).json()
        assert len(history["messages"]) == 4
    await pool.aclose()


async def test_auth_and_bad_input_get_clear_4xx(tracker: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs an API key"):
        HeadlessServer(
            str(tmp_path / "x.db"), "", factory_for(tracker, McpClientPool(), one_mcp_call)
        )
    pool = McpClientPool()
    server = HeadlessServer(
        str(tmp_path / "s.db"), KEY, factory_for(tracker, pool, one_mcp_call), max_body_bytes=1024
    )
    async with running(server) as client:
        assert (await client.post("/sessions")).status_code == 401
        wrong = await client.post("/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "API key" in wrong.json()["error"]
        await client.post("/sessions", headers=AUTH, json={"id": "s1"})
        cases: list[tuple[str, str, Any, int, str]] = [
            ("POST", "/sessions/s1/messages", b"{not json", 400, "not valid JSON"),
            ("POST", "/sessions/s1/messages", b"[1]", 400, "JSON object"),
            ("POST", "/sessions/s1/messages", b'{"text": ""}', 400, "'text'"),
            ("POST", "/sessions/nope/messages", b'{"text": "hi"}', 404, "no session 'nope'"),
            ("GET", "/sessions/nope", None, 404, "no session"),
            ("GET", "/sessions/bad%20id", None, 400, "session id"),
            ("POST", "/sessions/s1/messages", b'{"text": "' + b"x" * 2000 + b'"}', 413, "over"),
            ("POST", "/sessions/s1/events", b'{"id": "e"}', 400, "missing event field"),
            (
                "POST",
                "/sessions/s1/events",
                b'{"id": "e", "source": "s", "kind": "k", "content": "c", "when_idle": "never"}',
                400,
                "when_idle",
            ),
            (
                "POST",
                "/sessions/s1/events",
                b'{"id": "e", "source": "s", "kind": "k", "content": "c", "expires_at": "soon"}',
                400,
                "ISO 8601",
            ),
            ("POST", "/sessions", b'{"id": 5}', 400, "'id' must be a string"),
        ]
        for method, path, body, status, text in cases:
            response = await client.request(method, path, headers=AUTH, content=body)
            assert response.status_code == status, (path, body, response.text)
            assert text in response.json()["error"], response.json()
        history = (await client.get("/sessions/s1", headers=AUTH)).json()
        assert history["messages"] == []  # nothing bad was saved
    await pool.aclose()


async def test_fifty_concurrent_sessions(tracker: str, tmp_path: Path) -> None:
    pool = McpClientPool()
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, factory_for(tracker, pool, one_mcp_call))
    async with running(server) as client:

        async def one(i: int) -> str:
            created = await client.post("/sessions", headers=AUTH, json={"id": f"s{i}"})
            assert created.status_code == 201
            reply = await client.post(
                f"/sessions/s{i}/messages", headers=AUTH, json={"text": "list issues"}
            )
            events = sse_events(reply.text)
            assert [n for n, _ in events][:2] == ["tool_use", "tool_result"]
            assert events[1][1]["status"] == "success", events[1][1]
            text = events[-1][1]["text"]
            assert isinstance(text, str)
            return text

        answers = await asyncio.gather(*(one(i) for i in range(50)))
        assert answers == [f"s{i}: there are issues." for i in range(50)]
    sessions = await SqliteStore.list_sessions(str(tmp_path / "s.db"))
    assert len(sessions) == 50 and all(s.message_count == 4 for s in sessions)
    await pool.aclose()
