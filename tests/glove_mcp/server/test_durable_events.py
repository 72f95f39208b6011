"""Issue 16, item 5: ``glove-mcp serve`` lost events it had acknowledged.

It used the in-memory event queue: an event answered ``deferred`` was gone after a restart,
and the same id was accepted again. Now each session's events wait in a ``SqliteEventQueue``
in the server's database: after a restart (or after the session was closed to make room) the
event is delivered once, at the next request, and its id stays a duplicate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2

from tests.glove_mcp.server._harness import AUTH, serve_process, sse_events

EVENT = {"id": "deploy-1", "source": "ci", "kind": "deploy", "content": "v2 is live"}


def event_messages(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in history if m.get("framework_context") == "event"]


async def test_a_deferred_event_survives_a_restart_and_is_delivered_once(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    async with (
        serve_process(tmp_path, db=db, name="first") as server,
        httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client,
    ):
        assert (await client.post("/sessions", json={"id": "s1"})).status_code == 201
        posted = await client.post("/sessions/s1/events", json={**EVENT, "when_idle": "defer"})
        assert posted.json() == {"disposition": "deferred"}

    async with (
        serve_process(tmp_path, db=db, name="second") as server,
        httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client,
    ):
        again = await client.post("/sessions/s1/events", json=EVENT)
        assert again.json() == {"disposition": "duplicate"}
        for text in ("first", "second"):
            reply = await client.post("/sessions/s1/messages", json={"text": text})
            assert sse_events(reply.text)[-1][0] == "final"
        history = (await client.get("/sessions/s1")).json()["messages"]
        delivered = event_messages(history)
        assert len(delivered) == 1 and "v2 is live" in delivered[0]["text"]
        assert history.index(delivered[0]) == 0  # at the start of the first request after
    assert "Traceback" not in server.log.read_text()


async def test_a_deferred_event_survives_its_session_being_closed(tmp_path: Path) -> None:
    async with (
        serve_process(tmp_path, "--max-sessions", "1") as server,
        httpx2.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as client,
    ):
        await client.post("/sessions", json={"id": "s1"})
        posted = await client.post("/sessions/s1/events", json={**EVENT, "when_idle": "defer"})
        assert posted.json() == {"disposition": "deferred"}
        await client.post("/sessions", json={"id": "s2"})  # closes s1 to make room
        assert (await client.post("/sessions/s1/events", json=EVENT)).json() == {
            "disposition": "duplicate"
        }
        await client.post("/sessions/s1/messages", json={"text": "hello"})
        history = (await client.get("/sessions/s1")).json()["messages"]
        assert len(event_messages(history)) == 1
