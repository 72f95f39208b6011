"""glove_post_to_inbox, delivery of resolved items, and the transient blocking reminder."""

from __future__ import annotations

from glove_core import Glove, InboxItem, MemoryStore, Message, ScriptedModel, ToolCall
from glove_core.builtin import (
    POST_TO_INBOX_TOOL_NAME,
    blocking_reminder,
    pending_blocking_reminder,
    place_transient,
    take_resolved_inbox,
)
from glove_core.stores.memory import PlainMemoryStore


def post(call_id: str, **input: object) -> ToolCall:
    return ToolCall(id=call_id, name=POST_TO_INBOX_TOOL_NAME, input=dict(input))


async def test_posting_saves_a_pending_item_and_tells_the_model_its_id() -> None:
    store = MemoryStore()
    model = ScriptedModel(
        [
            [
                post("c1", tag="restock", request="oat milk back?"),
                post("c2", tag="approval", request="budget ok?", blocking=True),
            ],
            "Posted both.",
        ]
    )
    glove = Glove(model=model, system_prompt="s", store=store).build()
    result = await glove.process_request("watch these")

    items = await store.get_inbox_items()
    assert [(i.tag, i.request, i.status, i.blocking) for i in items] == [
        ("restock", "oat milk back?", "pending", False),
        ("approval", "budget ok?", "pending", True),
    ]
    [results] = [m.tool_results for m in result.messages if m.tool_results]
    assert results is not None
    first, second = (r.result for r in results)
    assert first.data["id"] == items[0].id
    assert "Continue with other work" in first.data["note"]
    assert "waiting" in second.data["note"]
    assert items[0].created_at.endswith("+00:00")


async def test_missing_fields_are_an_error_result() -> None:
    store = MemoryStore()
    model = ScriptedModel([[post("c1", tag="x")], "sorry"])
    glove = Glove(model=model, system_prompt="s", store=store).build()
    result = await glove.process_request("post")
    [results] = [m.tool_results for m in result.messages if m.tool_results]
    assert results is not None
    assert results[0].result.status == "error"
    assert "'request'" in (results[0].result.message or "")
    assert await store.get_inbox_items() == []


def item(item_id: str, status: str = "pending", *, blocking: bool = False) -> InboxItem:
    return InboxItem.model_validate(
        {
            "id": item_id,
            "tag": "t",
            "request": f"request {item_id}",
            "status": status,
            "blocking": blocking,
            "created_at": "2026-01-01T00:00:00+00:00",
        }
    )


async def test_resolved_items_are_delivered_once_then_consumed() -> None:
    store = MemoryStore()
    await store.add_inbox_item(item("a"))
    await store.add_inbox_item(item("b"))
    await store.add_inbox_item(item("c"))
    assert await take_resolved_inbox(store) is None
    await store.update_inbox_item("a", status="resolved", response="answer a", resolved_at="t1")
    await store.update_inbox_item("c", status="resolved", response="answer c", resolved_at="t2")

    message = await take_resolved_inbox(store)
    assert message is not None
    assert (message.sender, message.framework_context) == ("user", "inbox")
    assert "request a" in message.text and "answer a" in message.text
    assert "answer c" in message.text and "request b" not in message.text
    assert await store.get_messages() == [message]
    assert [i.status for i in await store.get_inbox_items()] == ["consumed", "pending", "consumed"]
    assert await take_resolved_inbox(store) is None
    assert await take_resolved_inbox(PlainMemoryStore("plain")) is None


async def test_delivery_uses_the_callers_save() -> None:
    store = MemoryStore()
    await store.add_inbox_item(item("a"))
    await store.update_inbox_item("a", status="resolved", response="yes")
    seen: list[Message] = []

    async def save(messages: list[Message]) -> None:
        seen.extend(messages)
        await store.append_messages(messages)

    message = await take_resolved_inbox(store, save)
    assert seen == [message]
    assert await store.get_messages() == [message]


async def test_blocking_reminder_lists_only_pending_blocking_items() -> None:
    assert blocking_reminder([item("a"), item("b", "resolved", blocking=True)]) is None
    reminder = blocking_reminder([item("a"), item("b", blocking=True)])
    assert reminder is not None
    assert reminder.framework_context == "inbox"
    assert "- b [t] request b" in reminder.text
    assert "request a" not in reminder.text

    store = MemoryStore()
    assert await pending_blocking_reminder(store) is None
    await store.add_inbox_item(item("z", blocking=True))
    from_store = await pending_blocking_reminder(store)
    assert from_store is not None and "request z" in from_store.text
    assert await pending_blocking_reminder(PlainMemoryStore("plain")) is None
    assert await store.get_messages() == []  # never saved


def test_place_transient_never_splits_a_tool_call_from_its_result() -> None:
    reminder = Message(sender="user", text="reminder", framework_context="inbox")
    user = Message(sender="user", text="hi")
    calls = Message(sender="agent", tool_calls=[ToolCall(id="c", name="x")])
    results = Message(sender="user", tool_results=[])

    assert place_transient([user, calls, results], reminder) == [user, calls, results, reminder]
    # A reply still waiting for its results: the reminder goes before it.
    assert place_transient([user, calls], reminder) == [user, reminder, calls]
    assert place_transient([], reminder) == [reminder]
    assert place_transient([user], None) == [user]
