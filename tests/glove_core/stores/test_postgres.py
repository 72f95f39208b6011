"""PostgresStore's one-statement writes and reads: a save with its counters, a request's start."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

from glove_core import InboxItem, Message, Usage
from glove_core.postgres import PostgresDatabase
from glove_core.stores import ReplyStore, RequestStartStore
from glove_core.stores.postgres import PostgresStore


async def test_a_reply_saved_with_its_usage_counts_on_a_new_and_an_old_session(
    postgres_url: str,
) -> None:
    async with PostgresDatabase(postgres_url) as db:
        store = await PostgresStore(db, "s").open()
        assert isinstance(store, ReplyStore)
        first = Message(sender="agent", text="one")
        await store.append_reply(first, Usage(input_tokens=10, output_tokens=2))  # new row
        second = Message(sender="agent", text="two")
        await store.append_reply(second, Usage(input_tokens=5, cache_read_tokens=7))
        assert [m.id for m in await store.get_messages()] == [first.id, second.id]
        assert await store.get_usage() == Usage(
            input_tokens=15, output_tokens=2, cache_read_tokens=7
        )
        assert await store.get_turn_count() == 2


async def test_a_batch_is_saved_whole_and_in_order(postgres_url: str) -> None:
    async with PostgresDatabase(postgres_url) as db:
        store = await PostgresStore(db, "s").open()
        batch = [Message(sender="user", text=f"m{n}", is_compaction=n == 3) for n in range(7)]
        await store.append_messages(batch)
        assert [m.id for m in await store.get_messages()] == [m.id for m in batch]
        assert await store.get_usage() == Usage()  # a plain save moves no counter
        assert await store.get_turn_count() == 0


async def test_the_request_start_is_the_three_reads_in_one(postgres_url: str) -> None:
    async with PostgresDatabase(postgres_url) as db:
        store = await PostgresStore(db, "s").open()
        assert isinstance(store, RequestStartStore)
        empty = await store.read_request_start()  # a session never written
        assert (empty.messages, empty.usage, empty.inbox) == ([], Usage(), [])
        await store.append_messages(
            [
                Message(sender="user", text="old"),
                Message(sender="user", text="summary", is_compaction=True),
                Message(sender="user", text="new"),
            ]
        )
        await store.add_usage(Usage(input_tokens=3, cache_write_tokens=4))
        await store.add_inbox_item(
            InboxItem(id="a", tag="t", request="r", blocking=True, created_at="2026-12-01")
        )
        await store.add_inbox_item(InboxItem(id="b", tag="t", request="q", created_at="2026-12-01"))
        await store.update_inbox_item("b", status="resolved", response="yes")
        start = await store.read_request_start()
        assert start.messages == await store.get_messages_since_compaction()
        assert [m.text for m in start.messages] == ["summary", "new"]
        assert start.usage == await store.get_usage()
        assert start.inbox == await store.get_inbox_items()
        assert [i.status for i in start.inbox] == ["pending", "resolved"]
