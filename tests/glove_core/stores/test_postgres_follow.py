"""PostgresStore.on_saved: what one instance saves, a follower on another hears at once."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

import asyncio

from glove_core import Message
from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore


async def test_a_follower_on_another_instance_hears_each_append(postgres_url: str) -> None:
    async with (
        PostgresDatabase(postgres_url) as writer_db,
        PostgresDatabase(postgres_url) as follower_db,
    ):
        writer = PostgresStore(writer_db, "conv")
        follower = PostgresStore(follower_db, "conv")
        other = PostgresStore(writer_db, "other")
        heard = asyncio.Event()
        calls: list[int] = []

        def wake() -> None:
            calls.append(1)
            heard.set()

        async with follower.on_saved(wake):
            await other.append_messages([Message(sender="user", text="not this one")])
            await writer.append_messages([Message(sender="user", text="hi")])
            await asyncio.wait_for(heard.wait(), 30)
            # Woken, the follower reads what the other instance committed.
            assert [m.text for m in await follower.get_messages()] == ["hi"]
            assert len(calls) == 1  # the other conversation's append woke nobody here
