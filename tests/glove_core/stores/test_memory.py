"""MemoryStore: messages are frozen values shared with readers; the lists are the caller's;
bad inbox ids raise as in SqliteStore."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from glove_core import InboxItem, MemoryStore, Message, ToolCall, Usage
from glove_core.errors import InboxItemError


async def test_messages_are_shared_values_and_lists_are_independent() -> None:
    store = MemoryStore("s")
    sent = [
        Message(sender="user", text="hi"),
        Message(sender="agent", tool_calls=[ToolCall(id="c1", name="t")]),
    ]
    await store.append_messages(sent)
    sent.append(Message(sender="user", text="not saved"))
    read = await store.get_messages()
    assert [m.text for m in read] == ["hi", ""]
    read.clear()
    assert len(await store.get_messages()) == 2
    with pytest.raises(ValidationError, match="frozen"):
        (await store.get_messages())[0].text = "rewritten"  # type: ignore[misc]
    changed = (await store.get_messages())[0].model_copy(update={"text": "a copy"})
    assert changed.text == "a copy" and (await store.get_messages())[0].text == "hi"


async def test_counters_and_reset() -> None:
    store = MemoryStore("s")
    await store.add_usage(Usage(input_tokens=5, output_tokens=2))
    await store.add_usage(Usage(input_tokens=1, cache_read_tokens=3))
    await store.increment_turn()
    assert await store.get_usage() == Usage(input_tokens=6, output_tokens=2, cache_read_tokens=3)
    assert await store.get_turn_count() == 1
    await store.reset_counters()
    assert await store.get_usage() == Usage() and await store.get_turn_count() == 0


async def test_bad_inbox_ids_raise_the_same_error_as_the_sqlite_store() -> None:
    store = MemoryStore("s1")
    item = InboxItem(id="i1", tag="watch", request="tell me", created_at="2026-01-01")
    await store.add_inbox_item(item)
    with pytest.raises(InboxItemError, match="'i1': already exists in conversation 's1'"):
        await store.add_inbox_item(item)
    with pytest.raises(InboxItemError, match="'nope': no such item in conversation 's1'"):
        await store.update_inbox_item("nope", status="consumed")
    assert [i.id for i in await store.get_inbox_items()] == ["i1"]  # nothing lost


async def test_the_window_starts_at_the_newest_compaction_of_any_append() -> None:
    store = MemoryStore()
    assert await store.get_messages_since_compaction() == []
    first = [Message(sender="user", text="a"), Message(sender="agent", text="b")]
    await store.append_messages(first)
    assert await store.get_messages_since_compaction() == first
    batch = [
        Message(sender="user", text="s1", is_compaction=True),
        Message(sender="user", text="s2", is_compaction=True),
        Message(sender="agent", text="c"),
    ]
    await store.append_messages(batch)
    await store.append_messages([Message(sender="user", text="d")])
    window = await store.get_messages_since_compaction()
    assert [m.text for m in window] == ["s2", "c", "d"]
    window.clear()  # the caller's list: the store is unchanged
    assert len(await store.get_messages_since_compaction()) == 3
