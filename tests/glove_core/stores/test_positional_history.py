"""PositionalHistoryStore: a conversation's length, and its messages from a position on.

Every store that has it holds to ``count_messages() == len(get_messages())`` and
``get_messages_from(k) == get_messages()[k:]``; the helpers fall back to ``get_messages`` for a
store without it.
"""

from __future__ import annotations

from typing import Any

import pytest

from glove_core import Message, PositionalHistoryStore
from glove_core.stores import MemoryStore, PlainMemoryStore
from glove_core.stores.base import count_messages, read_messages_from
from tests._backends import Backend


def batch(start: int, size: int, *, compaction_at: int | None = None) -> list[Message]:
    return [
        Message(sender="user", text=f"m{i}", is_compaction=(i == compaction_at))
        for i in range(start, start + size)
    ]


async def check_contract(store: Any) -> None:
    checked: object = store  # (narrowing store itself would hide its other methods)
    assert isinstance(checked, PositionalHistoryStore)
    assert await store.count_messages() == 0
    assert await store.get_messages_from(0) == []
    sizes = [1, 3, 5, 2]
    total = 0
    for size in sizes:
        await store.append_messages(batch(total, size, compaction_at=total + 1))
        total += size
    every = await store.get_messages()
    assert len(every) == total == await store.count_messages()
    for start in range(total + 3):  # past the end: empty, never an error
        assert await store.get_messages_from(start) == every[start:], start
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(ValueError, match="start must be an int >= 0"):
            await store.get_messages_from(bad)


async def test_sqlite_and_postgres_stores_hold_to_the_contract(backend: Backend) -> None:
    store = await backend.store("positional")
    await check_contract(store)
    # Another conversation in the same database counts apart.
    other = await backend.store("other")
    await other.append_messages(batch(0, 4))
    assert await store.count_messages() == 11 and await other.count_messages() == 4
    assert [m.text for m in await other.get_messages_from(3)] == ["m3"]


async def test_the_memory_store_holds_to_the_contract() -> None:
    await check_contract(MemoryStore())


async def test_the_helpers_read_a_plain_store_whole_and_slice_it() -> None:
    plain = PlainMemoryStore()
    assert not isinstance(plain, PositionalHistoryStore)
    await plain.append_messages(batch(0, 4))
    assert [m.text for m in await read_messages_from(plain, 2)] == ["m2", "m3"]
    assert await read_messages_from(plain, 9) == []
    assert await count_messages(plain) == 4
    with pytest.raises(ValueError, match="start must be an int >= 0"):
        await read_messages_from(plain, -1)
