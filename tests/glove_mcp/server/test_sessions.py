"""Issue 21, item 12: listing (paged) and deleting sessions, answering slots over HTTP, and
the access log."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
import pytest

from glove_core import Glove, Message, ScriptedModel, ToolCall, ToolContext, tool
from glove_core.event_queue import SqliteEventQueue
from glove_core.events import EventsConfig
from glove_mcp.server import ACCESS_LOGGER, HeadlessServer, SessionStore
from tests.glove_mcp.server._follow import follow
from tests.glove_mcp.server._harness import (
    AUTH,
    KEY,
    running,
    serve_process,
    simple_factory,
    sse_events,
)


def _call(name: str, **input: Any) -> Message:
    return Message(sender="agent", tool_calls=[ToolCall(id="c1", name=name, input=input)])


async def test_sessions_are_listed_in_pages(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        assert (await client.get("/sessions")).json() == {"sessions": [], "next": None}
        for name in ("e", "b", "d", "a", "c"):
            await client.post("/sessions", json={"id": name})
        await client.post("/sessions/b/messages", json={"text": "hi"})
        pages, after = [], None
        while True:
            params = {"limit": "2", **({"after": after} if after else {})}
            page = (await client.get("/sessions", params=params)).json()
            pages.append([s["id"] for s in page["sessions"]])
            if page["next"] is None:
                break
            after = page["next"]
        assert pages == [["a", "b"], ["c", "d"], ["e"]]
        first = (await client.get("/sessions", params={"limit": "2"})).json()["sessions"]
        assert first[1]["messages"] == 2 and first[0]["messages"] == 0
        assert first[1]["updated_at"] >= first[1]["created_at"]
        for params, message in [
            ({"limit": "0"}, "limit must be 1 to 200, got 0"),
            ({"limit": "201"}, "limit must be 1 to 200, got 201"),
            ({"limit": "ten"}, "limit must be a whole number"),
            ({"after": "../x"}, "after is 1-128 characters"),
        ]:
            reply = await client.get("/sessions", params=params)
            assert reply.status_code == 400 and message in reply.json()["error"], reply.text
        wrong = await client.get("/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401


def _factory_with_queue(db: Path) -> Callable[[str, SessionStore, AsyncExitStack], Glove]:
    def build(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        queue = SqliteEventQueue(db, session_id, check_pages=False)
        stack.push_async_callback(queue.aclose)
        return Glove(
            model=ScriptedModel(["ok"] * 5),
            system_prompt="headless",
            store=store,
            server_mode=True,
            events=EventsConfig(queue=queue),
        )

    return build


def _rows(db: Path, session_id: str) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {
            table: conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            for table in ("glove_sessions", "glove_messages", "glove_events")
        }


async def test_deleting_a_session_removes_everything_kept_under_its_id(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    server = HeadlessServer(str(db), KEY, _factory_with_queue(db))
    async with running(server) as client:
        for name in ("gone", "kept"):
            await client.post("/sessions", json={"id": name})
            await client.post(f"/sessions/{name}/messages", json={"text": "hello"})
            event = {"id": "e1", "source": "ci", "kind": "k", "content": "c", "when_idle": "defer"}
            assert (await client.post(f"/sessions/{name}/events", json=event)).status_code == 200
        assert _rows(db, "gone") == {"glove_sessions": 1, "glove_messages": 2, "glove_events": 1}
        assert server.open_sessions == 2
        assert (await client.delete("/sessions/gone")).status_code == 204
        assert server.open_sessions == 1  # closed before its rows went
        assert _rows(db, "gone") == {"glove_sessions": 0, "glove_messages": 0, "glove_events": 0}
        assert _rows(db, "kept") == {"glove_sessions": 1, "glove_messages": 2, "glove_events": 1}
        assert (await client.get("/sessions/gone")).status_code == 404
        again = await client.delete("/sessions/gone")
        assert again.status_code == 404 and again.json() == {"error": "no session 'gone'"}
        assert (await client.delete("/sessions/bad..id!")).status_code == 400
        listed = (await client.get("/sessions")).json()["sessions"]
        assert [s["id"] for s in listed] == ["kept"]
        # The id is free again: a new session starts empty.
        assert (await client.post("/sessions", json={"id": "gone"})).status_code == 201
        history = (await client.get("/sessions/gone")).json()
        assert history["messages"] == []


async def test_a_session_in_the_middle_of_a_turn_is_not_deleted(tmp_path: Path) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow() -> str:
        """Waits until the test lets it finish."""
        started.set()
        await release.wait()
        return "done"

    server = HeadlessServer(
        str(tmp_path / "s.db"),
        KEY,
        simple_factory(lambda s: [_call("slow"), "finished"], tools=(slow,)),
    )
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        turn = asyncio.create_task(client.post("/sessions/s1/messages", json={"text": "go"}))
        await started.wait()
        busy = await client.delete("/sessions/s1")
        assert busy.status_code == 409
        assert "session 's1' is busy" in busy.json()["error"]
        assert "retry when it ends" in busy.json()["error"]
        release.set()
        reply = await turn
        assert sse_events(reply.text)[-1][1]["text"] == "finished"  # the turn was not harmed
        assert (await client.delete("/sessions/s1")).status_code == 204


def _asking(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
    @tool(requires_permission=True)
    def deploy(target: str) -> str:
        """Deploy to a target.

        Args:
            target: where to deploy.
        """
        return f"deployed to {target}"

    glove = Glove(
        model=ScriptedModel([_call("deploy", target="prod"), "all done"]),
        system_prompt="headless",
        store=store,
    )
    glove.fold(deploy)
    return glove


async def test_a_permission_request_is_answered_over_http(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, _asking)
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        assert (await client.get("/sessions/s1/slots")).json() == {"slots": []}
        async with follow(client, "s1") as stream:
            turn = asyncio.create_task(client.post("/sessions/s1/messages", json={"text": "ship"}))
            shown = await stream.until(lambda i: i.name == "slots" and bool(i.data["slots"]))
            slot = shown[-1].data["slots"][0]
            assert slot["renderer"] == "permission_request"
            assert slot["input"]["tool"] == "deploy" and slot["input"]["input"] == {
                "target": "prod"
            }
            assert (await client.get("/sessions/s1/slots")).json() == {"slots": [slot]}
            url = f"/sessions/s1/slots/{slot['id']}"
            for body, message in [
                ({"value": "yes please"}, "answered with true (allow) or false"),
                ({}, 'send either {"value": ...} or {"reject": "reason"}'),
                ({"value": True, "reject": "x"}, "send either"),
                ({"reject": 3}, "'reject' must be a string"),
            ]:
                bad = await client.post(url, json=body)
                assert bad.status_code == 400 and message in bad.json()["error"], bad.text
            unknown = await client.post("/sessions/s1/slots/slot_nope", json={"value": True})
            assert unknown.status_code == 404
            assert unknown.json() == {"error": "no slot 'slot_nope' is waiting in session 's1'"}
            assert (await client.post(url, json={"value": True})).json() == {"answered": slot["id"]}
            assert (await client.post(url, json={"value": True})).status_code == 404
            items = await stream.until(lambda i: i.name == "tool_result")
            assert items[-1].data["data"] == "deployed to prod"
        reply = await turn
        names = [n for n, _ in sse_events(reply.text)]
        assert "slots" in names and names[-1] == "final"


async def test_every_request_gets_one_access_log_line_without_secrets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        await client.post("/sessions/s1/messages", json={"text": "a very private message"})
        await client.get("/sessions/s1", params={"token": "query-secret"})
        await client.get("/sessions/zz", headers={"Authorization": f"Bearer {KEY}x"})
    lines = [r.getMessage() for r in caplog.records if r.name == ACCESS_LOGGER]
    assert len(lines) == 4, lines
    expected = [
        ("POST", "/sessions", "201"),
        ("POST", "/sessions/s1/messages", "200"),
        ("GET", "/sessions/s1", "200"),
        ("GET", "/sessions/zz", "401"),
    ]
    for line, (method, path, status) in zip(lines, expected, strict=True):
        parts = line.split()
        assert parts[:3] == [method, path, status], line
        assert parts[3].endswith("B") and int(parts[3][:-1]) > 0
        assert parts[4].endswith("ms") and float(parts[4][:-2]) >= 0
    text = "\n".join(lines)
    for secret in (KEY, "query-secret", "private message"):
        assert secret not in text


async def test_serve_writes_the_access_log_when_asked(tmp_path: Path) -> None:
    async with (
        serve_process(tmp_path, "--access-log") as server,
        httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client,
    ):
        await client.post("/sessions", json={"id": "s1"})
        await client.get("/sessions/s1", params={"secret": "in-the-query"})
        assert (await client.get("/")).status_code == 404  # no page without --web
    lines = server.log.read_text().splitlines()
    assert [line.split()[:4] for line in lines] == [
        ["INFO", "glove_mcp.access:", "POST", "/sessions"],
        ["INFO", "glove_mcp.access:", "GET", "/sessions/s1"],
        ["INFO", "glove_mcp.access:", "GET", "/"],
    ], lines
    assert KEY not in "\n".join(lines) and "in-the-query" not in "\n".join(lines)


def _picking(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
    @tool
    async def pick(ctx: ToolContext) -> str:
        """Ask the person to choose a server."""
        options = [{"id": "notes", "name": "Notes"}, {"id": "tracker", "name": "Tracker"}]
        choice = await ctx.display.push_and_wait(
            "mcp_picker", {"question": "Which one?", "options": options}
        )
        return f"chose {choice!r}"

    glove = Glove(model=ScriptedModel([_call("pick"), "ok"]), system_prompt="headless", store=store)
    return glove.fold(pick)


async def test_a_choice_is_checked_against_the_options(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, _picking)
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        async with follow(client, "s1") as stream:
            turn = asyncio.create_task(client.post("/sessions/s1/messages", json={"text": "go"}))
            shown = await stream.until(lambda i: i.name == "slots" and bool(i.data["slots"]))
            url = f"/sessions/s1/slots/{shown[-1].data['slots'][0]['id']}"
            bad = await client.post(url, json={"value": "calendar"})
            assert bad.status_code == 400
            assert bad.json()["error"] == (
                "an mcp_picker is answered with one of 'notes', 'tracker', or \"\" for none of them"
            )
            assert (await client.post(url, json={"value": "tracker"})).status_code == 200
            items = await stream.until(lambda i: i.name == "tool_result")
            assert items[-1].data["data"] == "chose 'tracker'"
        await turn


async def test_closing_a_session_refuses_a_question_nobody_answered(tmp_path: Path) -> None:
    # A woken turn waits for a permission nobody gives; a new session needs its room.
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, _asking, max_sessions=1)
    async with running(server) as client:
        await client.post("/sessions", json={"id": "asks"})
        async with follow(client, "asks") as stream:
            event = {"id": "e1", "source": "ci", "kind": "k", "content": "c", "when_idle": "wake"}
            await client.post("/sessions/asks/events", json=event)
            await stream.until(lambda i: i.name == "slots" and bool(i.data["slots"]))
            async with asyncio.timeout(30):  # a hang guard: closing used to wait forever
                created = await client.post("/sessions", json={"id": "other"})
            assert created.status_code == 201
            items = await stream.until(lambda i: i.name == "tool_result")
        assert items[-1].data["status"] in ("error", "aborted")
        assert server.open_sessions == 1
