"""The follow stream's relay: saved messages in order and exactly once, a slow follower told
to reconnect at its cursor, relays dropped once nobody needs them."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable

from glove_core import Glove, MemoryStore, Message, ScriptedModel
from glove_core.subscribers import TextDelta, TokenConsumption
from glove_core.types import Usage
from glove_mcp.server._stream import FollowSnapshot, Relays, follow_stream


def _reader(store: MemoryStore) -> Callable[[int], Awaitable[FollowSnapshot]]:
    async def read(cursor: int) -> FollowSnapshot:
        messages = await store.get_messages()
        dumped = [m.model_dump(mode="json", exclude_none=True) for m in messages[cursor:]]
        return FollowSnapshot(dumped, [])

    return read


def _parse(frame: str) -> tuple[str, dict[str, object], str | None]:
    fields = dict(line.split(": ", 1) for line in frame.strip().splitlines())
    return fields["event"], json.loads(fields["data"]), fields.get("id")


async def _next(stream: AsyncGenerator[str, None]) -> tuple[str, dict[str, object], str | None]:
    return _parse(await anext(stream))


async def test_messages_saved_while_following_arrive_once_in_order() -> None:
    store = MemoryStore("s")
    await store.append_messages([Message(sender="user", text="before")])
    relays = Relays()
    glove = Glove(model=ScriptedModel([]), system_prompt="x", store=store)
    detach = relays.attach("s", glove, store)
    relay = relays.get("s")
    stream = follow_stream(relays, "s", _reader(store), 0)
    name, data, event_id = await _next(stream)
    assert (name, event_id, data["index"]) == ("message", "1", 0)
    assert (await _next(stream))[0] == "slots"
    assert await _next(stream) == ("ready", {"after": 1}, None)
    # The relay's first read covers everything: what the follower already has is skipped.
    await relay.record(TextDelta("hel"))
    await store.append_messages([Message(sender="agent", text="hello")])
    await relay.record(TokenConsumption(Usage(), Usage()))
    assert await _next(stream) == ("text_delta", {"agent": "main", "text": "hel"}, None)
    name, data, event_id = await _next(stream)
    assert (name, event_id, data["index"]) == ("message", "2", 1)
    await store.append_messages([Message(sender="user", text="next")])
    await relay.saved()
    name, data, event_id = await _next(stream)
    assert (name, event_id) == ("message", "3")
    await stream.aclose()
    assert len(relays) == 1  # the session is still open
    detach()
    assert len(relays) == 0 and relay not in glove.subscribers


async def test_a_follower_too_slow_to_keep_up_is_told_where_to_resume() -> None:
    store = MemoryStore("s")
    relays = Relays(max_backlog=3)
    relays.get("s").bind(store)
    stream = follow_stream(relays, "s", _reader(store), 0)
    assert [(await _next(stream))[0] for _ in range(2)] == ["slots", "ready"]
    for text in "abcde":
        await relays.get("s").record(TextDelta(text))
    assert await _next(stream) == ("reconnect", {"after": 0}, None)
    assert [frame async for frame in stream] == []  # the stream ended
    assert relays.get("s").followers == 0


async def test_a_deleted_session_ends_the_stream() -> None:
    store = MemoryStore("s")
    relays = Relays()
    stream = follow_stream(relays, "s", _reader(store), 0)
    assert [(await _next(stream))[0] for _ in range(2)] == ["slots", "ready"]
    relays.get("s").deleted()
    assert await _next(stream) == ("deleted", {"id": "s"}, None)
    assert [frame async for frame in stream] == []
    assert len(relays) == 0  # not attached, nobody following: dropped
