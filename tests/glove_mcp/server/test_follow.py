"""Issue 21, item 12: following a session over SSE (woken turns too), reconnecting without
losing a saved message, subagent events told apart, and a bounded ``error`` item."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from glove_core import Glove, Message, ModelRequest, ScriptedModel, ToolCall
from glove_core.errors import ModelError
from glove_mcp.server import HeadlessServer, SessionStore
from tests.glove_mcp.server._follow import Item, follow
from tests.glove_mcp.server._harness import KEY, running, simple_factory, sse_events

EVENT = {"id": "ev-1", "source": "ci", "kind": "build.finished", "content": "build 7 passed"}


def _messages(items: list[Item]) -> list[Item]:
    return [i for i in items if i.name == "message"]


async def test_two_followers_see_the_reply_of_a_turn_an_event_woke(tmp_path: Path) -> None:
    server = HeadlessServer(
        str(tmp_path / "s.db"), KEY, simple_factory(lambda s: ["the build is green"])
    )
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        async with follow(client, "s1") as one, follow(client, "s1", after=0) as two:
            assert one.replayed[-1].data == {"after": 0}
            posted = await client.post("/sessions/s1/events", json={**EVENT, "when_idle": "wake"})
            assert posted.json() == {"disposition": "woke"}
            for stream in (one, two):
                items = await stream.until(
                    lambda i: i.name == "message" and i.data["message"]["sender"] == "agent"
                )
                deltas = [i.data for i in items if i.name == "text_delta"]
                assert deltas == [{"agent": "main", "text": "the build is green"}]
                saved = _messages(items)
                assert [m.id for m in saved] == ["1", "2"]  # position + 1: the resume cursor
                assert "build 7 passed" in saved[0].data["message"]["text"]
                assert saved[0].data["message"]["framework_context"] == "event"
                assert saved[1].data["message"]["text"] == "the build is green"


async def test_a_request_message_reaches_followers_before_the_reply_is_previewed(
    tmp_path: Path,
) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory(lambda s: ["first", "2nd"]))
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        async with follow(client, "s1") as stream:
            for number, text in enumerate(("hello", "again")):
                reply = await client.post("/sessions/s1/messages", json={"text": text})
                assert reply.status_code == 200, reply.text
                items = await stream.until(
                    lambda i: i.name == "message" and i.data["message"]["sender"] == "agent"
                )
                order = [
                    (i.name, i.data["message"]["sender"] if i.name == "message" else "")
                    for i in items
                    if i.name in ("message", "text_delta")
                ]
                # The user's message is saved before the model is called: it comes first.
                assert order == [("message", "user"), ("text_delta", ""), ("message", "agent")]
                assert [m.id for m in _messages(items)] == [
                    str(2 * number + 1),
                    str(2 * number + 2),
                ]


async def test_a_follower_that_reconnects_gets_every_saved_message_once(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory(lambda s: ["a", "b"]))
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        await client.post("/sessions/s1/messages", json={"text": "one"})
        async with follow(client, "s1", after=0) as first:
            seen = _messages(first.replayed)
        assert [m.data["message"]["text"] for m in seen] == ["one", "a"]
        # Disconnected: another turn runs meanwhile.
        await client.post("/sessions/s1/messages", json={"text": "two"})
        last = seen[-1].id
        assert last is not None
        async with follow(client, "s1", headers={"Last-Event-ID": last}) as again:
            resumed = _messages(again.replayed)
        assert [(m.id, m.data["message"]["text"]) for m in resumed] == [("3", "two"), ("4", "b")]
        assert [m.data["index"] for m in resumed] == [2, 3]
        async with follow(client, "s1", after=4) as caught_up:
            assert _messages(caught_up.replayed) == []


@pytest.mark.parametrize(
    ("query", "headers", "message"),
    [
        ({"after": "-1"}, {}, "after must be 0 or more"),
        ({"after": "x"}, {}, "after must be a whole number"),
        ({"after": "9"}, {}, "after=9 is past the end of the conversation (0 messages)"),
        ({}, {"Last-Event-ID": "abc"}, "Last-Event-ID must be a message count"),
        ({}, {"Last-Event-ID": b"\xb2"}, "Last-Event-ID must be a message count"),  # "²"
    ],
)
async def test_a_bad_cursor_is_a_400(
    tmp_path: Path, query: dict[str, str], headers: dict[str, str | bytes], message: str
) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        raw = {k.encode(): v if isinstance(v, bytes) else v.encode() for k, v in headers.items()}
        reply = await client.get("/sessions/s1/events", params=query, headers=raw)
        assert reply.status_code == 400
        assert message in reply.json()["error"]
        unknown = await client.get("/sessions/nope/events")
        assert unknown.status_code == 404 and unknown.json() == {"error": "no session 'nope'"}
        assert (
            await client.get("/sessions/s1/events", headers={"Authorization": "x"})
        ).status_code == 401


def _with_subagent(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
    glove = Glove(
        model=ScriptedModel(
            [
                Message(
                    sender="agent",
                    text="let me look",
                    tool_calls=[
                        ToolCall(
                            id="c1",
                            name="glove_invoke_subagent",
                            input={"name": "find_capability", "prompt": "a calendar"},
                        )
                    ],
                ),
                "found it",
            ]
        ),
        system_prompt="main",
        store=store,
        server_mode=True,
    )
    glove.define_sub_agent(
        "find_capability",
        "finds servers",
        lambda: Glove(model=ScriptedModel(["the calendar server"]), system_prompt="child"),
    )
    return glove


async def test_subagent_text_is_tagged_apart_from_the_main_agent(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, _with_subagent)
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        async with follow(client, "s1") as stream:
            reply = await client.post("/sessions/s1/messages", json={"text": "find a calendar"})
            followed = await stream.until(
                lambda i: i.name == "message" and i.data["message"].get("text") == "found it"
            )
        for items in (sse_events(reply.text), [(i.name, i.data) for i in followed]):
            deltas = [(d["agent"], d["text"]) for n, d in items if n == "text_delta"]
            assert deltas == [
                ("main", "let me look"),
                ("find_capability", "the calendar server"),
                ("main", "found it"),
            ]
            names = [n for n, _ in items if n.startswith("subagent")]
            assert names == ["subagent_started", "subagent_finished"]


async def test_the_error_item_is_bounded_and_names_its_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    huge = "the provider said: " + "x" * 200_000

    def fail(request: ModelRequest) -> Any:
        raise ModelError(huge)

    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory(lambda s: [fail]))
    caplog.set_level("INFO", logger="glove_mcp.server")
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        async with follow(client, "s1") as stream:
            reply = await client.post("/sessions/s1/messages", json={"text": "hi"})
            saved = await stream.until(lambda i: i.name == "message")
        assert (
            saved[-1].data["message"]["text"] == "hi"
        )  # a failed turn's save still reaches followers
    assert len(reply.text) < 2_000
    name, data = sse_events(reply.text)[-1]
    assert name == "error"
    assert data["error"].startswith("ModelError: the provider said: xxx")
    assert len(data["error"]) <= 501 and data["truncated"] is True
    assert data["size"] == len("ModelError: ") + len(huge)
    logged = [r.getMessage() for r in caplog.records if data["error_id"] in r.getMessage()]
    assert len(logged) == 1 and len(logged[0]) < 9_000


async def test_deleting_the_session_ends_its_follow_streams(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        async with follow(client, "s1") as stream:
            assert (await client.delete("/sessions/s1")).status_code == 204
            items = await stream.until(lambda i: i.name == "deleted")
            assert items[-1].data == {"id": "s1"}
            assert await stream.next() is None
