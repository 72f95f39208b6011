"""The relay hears saves by other instances through the store's ``on_saved``, only while
followed: the subscription ends with the last follower, or when the session closes here (the
streams then read on from their cursor), and nothing is left subscribed."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from glove_core import Message, SqliteStore, StoreAdapter
from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore
from glove_mcp.server._postgres_sessions import PostgresSessionStorage
from glove_mcp.server._stream import FollowSnapshot, Relays, SessionRelay, follow_stream

SID = "conv"


class CountedStore(PostgresStore):
    """A real PostgresStore that counts the ``on_saved`` subscriptions open on it."""

    def __init__(self, database: PostgresDatabase, session_id: str) -> None:
        super().__init__(database, session_id)
        self.active = 0
        self.changed = asyncio.Event()
        self.existence_checks = 0

    async def session_exists(self) -> bool:
        self.existence_checks += 1
        return await super().session_exists()

    def on_saved(self, callback: Callable[[], None]) -> AbstractAsyncContextManager[None]:
        @asynccontextmanager
        async def counted() -> AsyncIterator[None]:
            async with super(CountedStore, self).on_saved(callback):
                self.active += 1
                self.changed.set()
                try:
                    yield
                finally:
                    self.active -= 1
                    self.changed.set()

        return counted()


def watching(relay: SessionRelay) -> bool:
    """Whether ``relay`` is subscribed now (a call: each assert reads the property afresh)."""
    return relay.watching


async def settled(store: CountedStore, active: int) -> None:
    """Wait (at most 10 s) until ``active`` subscriptions are open on ``store``: one starts,
    and a cancelled one ends, on the loop's next turns."""
    async with asyncio.timeout(10):
        while store.active != active:
            store.changed.clear()
            await store.changed.wait()


def reader(store: StoreAdapter) -> Callable[[int], Any]:
    async def read(cursor: int) -> FollowSnapshot:
        messages = await store.get_messages()
        dumped = [m.model_dump(mode="json", exclude_none=True) for m in messages[cursor:]]
        return FollowSnapshot(dumped, [])

    return read


async def next_event(frames: AsyncGenerator[str, None]) -> tuple[str, dict[str, Any]]:
    """The next named frame (keep-alive comments skipped)."""
    async with asyncio.timeout(15):
        while True:
            text = await anext(frames)
            if text.startswith(":"):
                continue
            fields = dict(line.split(": ", 1) for line in text.strip().splitlines())
            return fields["event"], json.loads(fields["data"])


async def test_saves_elsewhere_reach_a_follower_and_the_subscription_ends_with_it(
    postgres_url: str,
) -> None:
    async with (
        PostgresDatabase(postgres_url) as here,
        PostgresDatabase(postgres_url) as elsewhere,
    ):
        writer = PostgresStore(elsewhere, SID)  # another instance runs the turns
        await writer.create_session()
        store = CountedStore(here, SID)
        relays = Relays()
        relay = relays.get(SID)
        relay.bind(store)  # the session is open here, but no turn runs here
        assert not watching(relay)  # nobody follows: nothing subscribed

        frames = follow_stream(relays, SID, reader(store), 0)
        assert await next_event(frames) == ("slots", {"slots": []})
        assert await next_event(frames) == ("ready", {"after": 0})
        assert watching(relay)
        await settled(store, 1)
        await writer.append_messages([Message(sender="user", text="hi")])
        await writer.append_messages([Message(sender="agent", text="hello")])
        got = [await next_event(frames) for _ in range(2)]
        assert [(name, d["index"], d["message"]["text"]) for name, d in got] == [
            ("message", 0, "hi"),
            ("message", 1, "hello"),
        ]

        await frames.aclose()  # the last follower leaves
        assert not watching(relay)
        await settled(store, 0)
        await writer.append_messages([Message(sender="user", text="unfollowed")])
        relay.bind(None)
        assert store.active == 0 and not watching(relay)


@asynccontextmanager
async def two_instances(
    url: str, first: str
) -> AsyncIterator[tuple[PostgresStore, CountedStore, Relays]]:
    """Another instance's store (which has saved ``first``), and this instance's: the session
    open here (bound to its relay), where no turn runs."""
    async with PostgresDatabase(url) as here, PostgresDatabase(url) as elsewhere:
        writer = PostgresStore(elsewhere, SID)
        await writer.create_session()
        await writer.append_messages([Message(sender="user", text=first)])
        store = CountedStore(here, SID)
        relays = Relays()
        relays.get(SID).bind(store)
        yield writer, store, relays


async def test_a_session_closing_here_makes_the_stream_read_on_from_its_cursor(
    postgres_url: str,
) -> None:
    async with two_instances(postgres_url, "before") as (writer, store, relays):
        relay: SessionRelay = relays.get(SID)
        frames = follow_stream(relays, SID, reader(store), 1)
        assert (await next_event(frames))[0] == "slots"
        assert (await next_event(frames))[0] == "ready"
        await settled(store, 1)

        relay.bind(None)  # the session closed here (idle): no subscription is left
        await settled(store, 0)
        assert not watching(relay)
        await writer.append_messages([Message(sender="agent", text="while closed")])
        # The stream reads from its cursor (a server's reader opens the session again).
        name, data = await next_event(frames)
        assert (name, data["index"], data["message"]["text"]) == ("message", 1, "while closed")
        relay.bind(store)  # opened again: the subscription resumes
        await settled(store, 1)
        await writer.append_messages([Message(sender="agent", text="after")])
        name, data = await next_event(frames)
        assert (name, data["index"], data["message"]["text"]) == ("message", 2, "after")
        await frames.aclose()
        await settled(store, 0)


async def test_a_delete_by_another_instance_ends_the_follow_stream_here(
    postgres_url: str,
) -> None:
    async with two_instances(postgres_url, "hi") as (writer, store, relays):
        frames = follow_stream(relays, SID, reader(store), 0)
        assert (await next_event(frames))[0] == "message"
        assert await next_event(frames) == ("slots", {"slots": []})
        assert await next_event(frames) == ("ready", {"after": 1})
        await settled(store, 1)
        # Saves by the other instance wake the relay without an existence check each.
        await writer.append_messages([Message(sender="agent", text="hello")])
        assert (await next_event(frames))[1]["message"]["text"] == "hello"
        assert store.existence_checks == 0
        # The other instance deletes the session: its NOTIFY wakes this relay, which finds
        # the session gone (not just nothing new) and ends the stream, well before the
        # safety read's interval.
        assert await PostgresSessionStorage(writer.database).delete(SID)
        assert await next_event(frames) == ("deleted", {"id": SID})
        with pytest.raises(StopAsyncIteration):
            await anext(frames)
        await settled(store, 0)


async def test_a_store_without_on_saved_subscribes_to_nothing(tmp_path: Any) -> None:
    async with SqliteStore(str(tmp_path / "s.db"), SID) as store:
        relays = Relays()
        relay = relays.get(SID)
        relay.bind(store)
        with relays.following(SID):
            assert not watching(relay)
        relay.bind(None)
        assert not watching(relay)


class ReadsCounted(SqliteStore):
    """A real SqliteStore that records how the relay reads it."""

    def __init__(self, path: str) -> None:
        super().__init__(path, SID)
        self.reads: list[str | int] = []

    async def get_messages(self) -> list[Message]:
        self.reads.append("all")
        return await super().get_messages()

    async def get_messages_from(self, start: int) -> list[Message]:
        self.reads.append(start)
        return await super().get_messages_from(start)


async def test_each_save_reads_only_the_new_messages(tmp_path: Any) -> None:
    async with ReadsCounted(str(tmp_path / "s.db")) as store:
        await store.append_messages([Message(sender="user", text=f"old {i}") for i in range(50)])
        relay = SessionRelay(SID, max_backlog=100)
        relay.bind(store)
        follower = relay.join()
        await relay.saved()  # the first read after binding: everything, from position 0
        await store.append_messages([Message(sender="agent", text="new 1")])
        await relay.saved()
        await relay.saved()  # nothing new: an empty read from the end
        await store.append_messages([Message(sender="agent", text=f"new {i}") for i in (2, 3)])
        await relay.saved()
        assert store.reads == [0, 50, 51, 51]  # never the whole conversation again
        sent = []
        while (item := await follower.get(0.01)) is not None:
            sent.append(item)
        assert [(s.start, [m["text"] for m in s.messages][-1:]) for s in sent] == [  # type: ignore[union-attr]
            (0, ["old 49"]),
            (50, ["new 1"]),
            (51, ["new 3"]),
        ]


async def test_a_follower_who_joins_mid_call_still_gets_saves_before_live_items(
    tmp_path: Any,
) -> None:
    from glove_core import Usage
    from glove_core.subscribers import TextDelta, TokenConsumption

    async with SqliteStore(str(tmp_path / "s.db"), SID) as store:
        relay = SessionRelay(SID, max_backlog=100)
        relay.bind(store)
        first = relay.join()
        await store.append_messages([Message(sender="user", text="q1")])
        await relay.record(TextDelta(text="a1"))
        relay.leave(first)  # gone mid-call: the call's end is heard by nobody
        await relay.record(TokenConsumption(usage=Usage(), total=Usage()))
        await relay.turn_ended()
        second = relay.join()
        await store.append_messages([Message(sender="user", text="q2")])
        await relay.record(TextDelta(text="a2"))
        got = []
        while (item := await second.get(0.01)) is not None:
            got.append(item)
        # q1 and q2 (saved, read from the start for the new follower) before the live "a2".
        assert [type(i).__name__ for i in got] == ["_Saved", "tuple"]
        saved, live = got
        assert [m["text"] for m in saved.messages] == ["q1", "q2"]  # type: ignore[union-attr]
        assert live == ("text_delta", {"agent": "main", "text": "a2"})


async def test_a_relay_not_read_since_binding_starts_at_its_followers_lowest_cursor(
    tmp_path: Any,
) -> None:
    async with ReadsCounted(str(tmp_path / "s.db")) as store:
        await store.append_messages([Message(sender="user", text=f"old {i}") for i in range(50)])
        relays = Relays()
        relays.get(SID).bind(store)  # the session (re)opened: the relay has read nothing yet
        frames = follow_stream(relays, SID, reader(store), 48)
        for _ in range(2):
            assert (await next_event(frames))[0] == "message"  # positions 48 and 49
        assert (await next_event(frames))[0] == "slots"
        assert (await next_event(frames)) == ("ready", {"after": 50})
        await store.append_messages([Message(sender="agent", text="new")])
        await relays.get(SID).saved()
        name, data = await next_event(frames)
        assert (name, data["index"], data["message"]["text"]) == ("message", 50, "new")
        # The stream's own snapshot read everything ("all": this test's reader); the relay
        # read from the follower's cursor, never the 50 messages before it.
        assert store.reads == ["all", 50]
        await frames.aclose()
