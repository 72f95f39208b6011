"""Inbox delivery and compaction through ``Glove.process_request`` on a real SQLite file.

These tests need the loop wiring of issue 3: ``Glove(compaction=)``, ``take_resolved_inbox`` at
the start of each request, ``pending_blocking_reminder`` on each model call and
``maybe_compact`` before each model call (see the issue 3 report).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from glove_core import (
    CompactionConfig,
    Glove,
    MemoryStore,
    Message,
    ModelRequest,
    ScriptedModel,
    SqliteStore,
    ToolCall,
    tool,
)
from glove_core.errors import ContextWindowExceededError
from glove_core.subscribers import CompactionEnd
from glove_core.testing import RecordingSubscriber


def assert_every_tool_use_answered(messages: list[Message]) -> None:
    for index, message in enumerate(messages):
        if message.sender == "agent" and message.tool_calls:
            following = messages[index + 1]
            answered = {r.call_id for r in following.tool_results or []}
            assert answered == {c.id for c in message.tool_calls}, (index, messages)


async def test_a_resolved_inbox_item_reaches_the_next_request_once(tmp_path: Path) -> None:
    path = tmp_path / "inbox.db"
    post = ToolCall(
        id="c1",
        name="glove_post_to_inbox",
        input={"tag": "approval", "request": "is the budget ok?", "blocking": True},
    )
    model = ScriptedModel([[post], "Waiting for approval.", "Approved, booking.", "Nothing new."])
    async with SqliteStore(path, "s") as store:
        glove = Glove(model=model, system_prompt="s", store=store).build()
        await glove.process_request("book it once the budget is approved")

        # The call after posting carried a transient reminder of the blocking item.
        after_post = model.requests[1]
        reminders = [m for m in after_post.messages if m.framework_context == "inbox"]
        assert len(reminders) == 1
        assert "is the budget ok?" in reminders[0].text
        assert after_post.messages.index(reminders[0]) >= after_post.saved_count
        assert_every_tool_use_answered(after_post.messages)
        assert not any(m.framework_context == "inbox" for m in await store.get_messages())

        [item] = await store.get_inbox_items()
        await SqliteStore.resolve_inbox_item(path, item.id, "Budget approved.")
        await glove.process_request("any news?")

        next_request = model.requests[2]
        delivered = [m for m in next_request.messages if m.framework_context == "inbox"]
        assert len(delivered) == 1  # the answer, and no reminder: nothing is pending now
        assert "Budget approved." in delivered[0].text
        user_index = next(i for i, m in enumerate(next_request.messages) if m.text == "any news?")
        assert next_request.messages.index(delivered[0]) < user_index
        assert delivered[0].id in {m.id for m in await store.get_messages()}

        await glove.process_request("and now?")
        # Delivered once: it stays in history but is not injected again.
        assert [m.id for m in model.requests[3].messages if m.framework_context == "inbox"] == [
            delivered[0].id
        ]
        assert [i.status for i in await store.get_inbox_items()] == ["consumed"]


@tool
async def fetch_page() -> str:
    """Fetch a long web page."""
    return "lorem ipsum " * 400


@pytest.mark.parametrize("summary_fails", [False, True], ids=["summary", "digest"])
async def test_the_loop_compacts_before_a_call_that_would_be_too_big(
    tmp_path: Path, summary_fails: bool
) -> None:
    path = tmp_path / "long.db"
    config = CompactionConfig(
        context_limit=2_000, threshold=0.5, keep_last=2, max_verbatim_chars=300
    )

    def summarise(request: ModelRequest) -> str:
        assert request.system == config.instructions
        if summary_fails:
            raise RuntimeError("summary model down")
        return "The user asked to read a page; it was fetched."

    model = ScriptedModel(
        [[ToolCall(id="c1", name="fetch_page", input={})], summarise, "The page is lorem ipsum."]
    )
    recorder = RecordingSubscriber()
    async with SqliteStore(path, "s") as store:
        glove = Glove(model=model, system_prompt="s", store=store, compaction=config)
        glove.fold(fetch_page).build()
        glove.add_subscriber(recorder)
        result = await glove.process_request("read the page")
        saved = await store.get_messages()

    assert result.text == "The page is lorem ipsum."
    names = recorder.names()
    assert names.index("tool_use_result") < names.index("compaction_start")
    assert names.index("compaction_start") < names.index("compaction_end")
    end = recorder.events[names.index("compaction_end")]
    assert isinstance(end, CompactionEnd) and end.fallback is summary_fails

    final_call = model.requests[-1]
    summary = final_call.messages[0]
    assert summary.is_compaction
    assert ("mechanical digest" in summary.text) is summary_fails
    assert "[tool call fetch_page c1]" in summary.text
    assert_every_tool_use_answered(final_call.messages)
    assert not any(m.tool_calls or m.tool_results for m in final_call.messages)
    # The store keeps everything: the original exchange, the summary, the final reply.
    assert [m.sender for m in saved] == ["user", "agent", "user", "user", "agent"]
    assert saved[3] == summary
    assert summary in result.messages

    # A new Glove on the same file sees the compaction split.
    second_model = ScriptedModel(["Continuing."])
    async with SqliteStore(path, "s") as store:
        second = Glove(model=second_model, system_prompt="s", store=store, compaction=config)
        second.fold(fetch_page).build()
        await second.process_request("what next?")
    assert second_model.requests[0].messages[0] == summary
    assert second_model.requests[0].messages[1].text == "The page is lorem ipsum."


async def test_context_window_overflow_compacts_once_and_retries() -> None:
    calls: list[str] = []

    def too_long(request: ModelRequest) -> str:
        calls.append("overflow")
        raise ContextWindowExceededError("anthropic", 400, "prompt is too long")

    def answer(request: ModelRequest) -> str:
        assert request.messages[0].is_compaction  # the retry sends the compacted history
        return "answered after compaction"

    store = MemoryStore()
    await store.append_messages(
        [Message(sender="user", text=f"old turn {i}") for i in range(3)]
        + [Message(sender="agent", text="old reply")]
    )
    model = ScriptedModel([too_long, "summary of the old turns", answer])
    glove = Glove(
        model=model,
        system_prompt="s",
        store=store,
        compaction=CompactionConfig(instructions="Summarise."),
    ).build()
    result = await glove.process_request("new question")
    assert result.text == "answered after compaction"
    assert calls == ["overflow"]
    assert sum(m.is_compaction for m in await store.get_messages()) == 1


async def test_a_second_overflow_is_raised_not_looped() -> None:
    def too_long(request: ModelRequest) -> str:
        raise ContextWindowExceededError("anthropic", 400, "prompt is too long")

    store = MemoryStore()
    await store.append_messages(
        [Message(sender="user", text="old"), Message(sender="agent", text="reply")]
    )
    glove = Glove(
        model=ScriptedModel([too_long, "summary", too_long]),
        system_prompt="s",
        store=store,
        compaction=CompactionConfig(instructions="Summarise."),
    ).build()
    with pytest.raises(ContextWindowExceededError):
        await glove.process_request("new question")
    without = Glove(model=ScriptedModel([too_long]), system_prompt="s").build()
    with pytest.raises(ContextWindowExceededError):
        await without.process_request("q")
