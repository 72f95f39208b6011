"""Issue 20: a client follows a session from any instance.

Two real ``glove-mcp serve`` processes share one PostgreSQL database. A client follows a session
on instance B while every request for it (messages, an outside event that wakes a turn) goes
to instance A. B runs none of those turns, so its relay hears of A's saves only through the
store's ``LISTEN/NOTIFY`` wake-up: the follower on B must get every saved message exactly once
and in order, and a reconnect with ``after=`` resumes without a duplicate.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2

from tests.glove_mcp.server._follow import Item, Stream, follow
from tests.glove_mcp.server._harness import AUTH, serve_process

SCRIPT = {"from_history": True, "replies": ["first", "second", "third", "fourth", "fifth"]}
REQUESTS = ("one", "two", "three")


def message_items(items: list[Item]) -> list[Item]:
    return [i for i in items if i.name == "message"]


async def until_messages(stream: Stream, seen: list[Item], count: int) -> None:
    """Read ``stream`` (its messages appended to ``seen``) until the message at position
    ``count - 1`` of the conversation arrived."""
    if seen and seen[-1].data["index"] >= count - 1:
        return
    items = await stream.until(
        lambda i: i.name == "message" and i.data["index"] >= count - 1, limit=15
    )
    seen.extend(message_items(items))


async def history(client: httpx2.AsyncClient, sid: str) -> list[dict[str, Any]]:
    response = await client.get(f"/sessions/{sid}")
    assert response.status_code == 200, response.text
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


def assert_exactly_once(seen: list[Item], saved: list[dict[str, Any]]) -> None:
    assert [i.data["index"] for i in seen] == list(range(len(saved)))
    assert [i.id for i in seen] == [str(n + 1) for n in range(len(saved))]
    assert [i.data["message"]["id"] for i in seen] == [m["id"] for m in saved]


async def test_a_follower_on_one_instance_gets_what_another_saves(
    tmp_path: Path, postgres_url: str
) -> None:
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(
            serve_process(tmp_path, script=SCRIPT, name="a", database=postgres_url)
        )
        b = await stack.enter_async_context(
            # B closes an idle session after 1 s: the follow stream then reads on from its
            # cursor, which opens the session again and resumes the subscription.
            serve_process(
                tmp_path, "--idle-timeout", "1", script=SCRIPT, name="b", database=postgres_url
            )
        )
        to_a = await stack.enter_async_context(
            httpx2.AsyncClient(base_url=a.url, headers=AUTH, timeout=30)
        )
        to_b = await stack.enter_async_context(
            httpx2.AsyncClient(base_url=b.url, headers=AUTH, timeout=30)
        )
        created = await to_a.post("/sessions", json={"id": "followed"})
        assert created.status_code == 201, created.text

        seen: list[Item] = []
        async with follow(to_b, "followed", after=0) as stream:
            assert message_items(stream.replayed) == []
            for number, text in enumerate(REQUESTS, 1):
                reply = await to_a.post("/sessions/followed/messages", json={"text": text})
                assert reply.status_code == 200 and "event: final" in reply.text, reply.text
                await until_messages(stream, seen, 2 * number)  # the request and its reply
            await asyncio.sleep(1.5)  # long enough for B to close the idle session
            # An outside event posted to A wakes a turn no request waits for.
            event = {"id": "ev-1", "source": "ci", "kind": "build", "content": "build is green"}
            posted = await to_a.post(
                "/sessions/followed/events", json={**event, "when_idle": "wake"}
            )
            assert posted.status_code == 200, posted.text
            await until_messages(stream, seen, 2 * len(REQUESTS) + 2)  # the event, the reply
            saved = await history(to_a, "followed")
            assert_exactly_once(seen, saved)
            assert any("build is green" in (m.get("text") or "") for m in saved)
            assert saved[-1]["sender"] == "agent"

        # Disconnected: A saves more; a reconnect to B from the cursor gets just that.
        cursor = len(seen)
        reply = await to_a.post("/sessions/followed/messages", json={"text": "four"})
        assert reply.status_code == 200, reply.text
        async with follow(to_b, "followed", after=cursor) as stream:
            resumed = message_items(stream.replayed)
            await until_messages(stream, resumed, cursor + 2)
            saved = await history(to_a, "followed")
            assert_exactly_once(seen + resumed, saved)
            # And it keeps following A's saves live after the reconnect.
            reply = await to_a.post("/sessions/followed/messages", json={"text": "five"})
            assert reply.status_code == 200, reply.text
            await until_messages(stream, resumed, cursor + 4)
            assert_exactly_once(seen + resumed, await history(to_a, "followed"))
