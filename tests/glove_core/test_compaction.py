"""Compaction driven directly: trigger size, summary, digest fallback, carried state, pairing."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from glove_core import (
    AbortController,
    AbortError,
    CompactionConfig,
    Glove,
    InboxItem,
    MemoryStore,
    Message,
    ModelRequest,
    ScriptedModel,
    Task,
    ToolCall,
    ToolResult,
    ToolResultData,
    Usage,
)
from glove_core.compaction import (
    compact,
    estimate_message_tokens,
    maybe_compact,
    next_call_tokens,
)
from glove_core.models.base import ModelResponse
from glove_core.subscribers import CompactionEnd, CompactionStart
from glove_core.testing import RecordingSubscriber


def user(text: str) -> Message:
    return Message(sender="user", text=text)


def agent(text: str = "", *calls: ToolCall) -> Message:
    return Message(sender="agent", text=text, tool_calls=list(calls) or None)


def results(*pairs: tuple[ToolCall, str]) -> Message:
    return Message(
        sender="user",
        tool_results=[
            ToolResult(
                call_id=c.id,
                name=c.name,
                result=ToolResultData(status=status, data=f"{c.name} output"),
            )
            for c, status in pairs
        ],
    )


def conversation() -> list[Message]:
    search = ToolCall(id="c1", name="search", input={"q": "flights"})
    fetch = ToolCall(id="c2", name="fetch", input={"url": "https://example.com"})
    return [
        user("Plan a trip to Lisbon in May"),
        agent("Searching.", search),
        results((search, "success")),
        agent("Fetching.", fetch),
        results((fetch, "error")),
        agent("Found flights for 120 EUR."),
        user("Book the cheapest one"),
        agent("Booked flight TP123."),
    ]


async def make_glove(script: list[Any], store: MemoryStore | None = None) -> Glove:
    glove = Glove(model=ScriptedModel(script), system_prompt="travel agent", store=store)
    return glove.build()


async def saved(glove: Glove, history: list[Message]) -> list[Message]:
    await glove.store.append_messages(history)
    return history


def fail(request: ModelRequest) -> str:
    raise RuntimeError("summary service down")


# --- config ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("context_limit", 10, "context_limit must be at least 1,000 tokens, got 10"),
        ("threshold", 0.0, r"threshold must be a fraction in \(0, 1\], got 0.0"),
        ("threshold", 1.5, "got 1.5"),
        ("keep_last", -1, "keep_last must be between 0 and 200 messages, got -1"),
        ("max_verbatim_chars", 10, "max_verbatim_chars must be at least 200, got 10"),
        ("chars_per_token", 0.1, "chars_per_token must be between 0.5 and 20, got 0.1"),
        ("instructions", "  ", "instructions must not be empty"),
    ],
)
def test_config_validation_names_field_value_and_range(
    field: str, value: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        CompactionConfig(**{field: value})


def test_config_defaults_and_frozen() -> None:
    config = CompactionConfig()
    assert (config.context_limit, config.threshold, config.trigger_tokens) == (100_000, 0.9, 90_000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.threshold = 0.5  # type: ignore[misc]


# --- trigger ---------------------------------------------------------------------------------


def test_next_call_size_counts_the_whole_last_prompt_plus_what_was_appended() -> None:
    appended = [user("x" * 400)]
    assert estimate_message_tokens(appended) == 100
    usage = Usage(input_tokens=10, output_tokens=999, cache_read_tokens=300, cache_write_tokens=40)
    assert next_call_tokens(usage, appended) == 450
    assert next_call_tokens(None, appended) is None


async def test_trigger_is_the_next_call_size_not_a_cumulative_counter() -> None:
    store = MemoryStore()
    # The conversation has used a million input tokens over many calls: irrelevant.
    await store.add_usage(Usage(input_tokens=1_000_000))
    glove = await make_glove(["SUMMARY"], store)
    history = await saved(glove, conversation())
    config = CompactionConfig(context_limit=10_000, threshold=0.5)

    below = Usage(input_tokens=1_000, cache_read_tokens=3_000)
    assert await maybe_compact(glove, config, history, below, [user("x" * 3_996)]) is None
    assert glove.model.requests == []  # type: ignore[attr-defined]

    new = await maybe_compact(glove, config, history, below, [user("x" * 4_000)])
    assert new is not None and new[0].is_compaction


async def test_without_a_last_call_the_whole_request_is_estimated() -> None:
    glove = Glove(model=ScriptedModel(["S"]), system_prompt="p" * 20_000).build()
    history = await saved(glove, conversation())
    config = CompactionConfig(context_limit=10_000, threshold=0.5)
    assert await maybe_compact(glove, config, history, None, []) is not None
    small = Glove(model=ScriptedModel(["S"]), system_prompt="p").build()
    history = await saved(small, conversation())
    assert await maybe_compact(small, config, history, None, []) is None


# --- summary ---------------------------------------------------------------------------------


async def test_summary_is_saved_with_events_and_the_model_sees_only_it() -> None:
    store = MemoryStore()
    glove = await make_glove(["The user is going to Lisbon; flight TP123 booked."], store)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    history = await saved(glove, conversation())

    new = await compact(glove, CompactionConfig(keep_last=2), history, estimated_tokens=42)

    all_messages = await store.get_messages()
    assert all_messages[: len(history)] == history  # the store keeps everything
    assert all_messages[len(history) :] == new
    [summary] = new
    assert (summary.sender, summary.is_compaction) == ("user", True)
    assert (
        "<summary>\nThe user is going to Lisbon; flight TP123 booked.\n</summary>" in summary.text
    )
    assert "[user] Book the cheapest one" in summary.text  # recent messages, verbatim
    assert "[agent] Booked flight TP123." in summary.text

    request = glove.model.requests[0]  # type: ignore[attr-defined]
    assert request.system == CompactionConfig().instructions
    assert request.tools == []
    transcript = request.messages[0].text
    assert "[tool call search c1]" in transcript
    assert "[tool result fetch c2: error]" in transcript

    names = recorder.names()
    assert names == ["compaction_start", "compaction_end"]  # no text_delta from the summary
    assert recorder.events[0] == CompactionStart(estimated_tokens=42)
    end = recorder.events[1]
    assert isinstance(end, CompactionEnd)
    assert (end.summary, end.fallback) == (summary.text, False)
    assert (await store.get_usage()).output_tokens > 0  # the summary call is counted


@pytest.mark.parametrize("script", [[fail], [], [""]], ids=["raises", "exhausted", "empty"])
async def test_a_failing_summary_call_falls_back_to_a_digest(script: list[Any]) -> None:
    glove = await make_glove(script)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    search = ToolCall(id="c9", name="search", input={})
    history = await saved(
        glove,
        [
            *conversation(),
            agent("again", search),
            results((search, "success")),
            agent("again", search.model_copy(update={"id": "c10"})),
            results((search.model_copy(update={"id": "c10"}), "success")),
            agent("Done."),
        ],
    )

    [summary] = await compact(glove, CompactionConfig(keep_last=1), history)

    text = summary.text
    assert summary.is_compaction
    assert "mechanical digest" in text
    assert "First user request: Plan a trip to Lisbon in May" in text
    assert "- search: success\n- fetch: error\n- search: success (x2)" in text
    assert "11 message(s) are not reproduced here" in text
    assert "<recent_messages>\n[agent] Done.\n</recent_messages>" in text
    end = recorder.events[-1]
    assert isinstance(end, CompactionEnd) and end.fallback is True
    assert await glove.store.get_messages() == [*history, summary]


async def test_a_previous_summary_is_carried_verbatim_never_resummarised() -> None:
    glove = await make_glove(["FIRST SUMMARY", "SECOND SUMMARY", "THIRD SUMMARY"])
    history = await saved(glove, conversation())
    config = CompactionConfig(keep_last=0)
    [first] = await compact(glove, config, history)

    more = [first, user("Also book a hotel"), agent("Hotel booked.")]
    await glove.store.append_messages(more[1:])
    [second] = await compact(glove, config, more)

    summary_request = glove.model.requests[1]  # type: ignore[attr-defined]
    assert "FIRST SUMMARY" not in summary_request.messages[0].text
    assert "Also book a hotel" in summary_request.messages[0].text
    assert "<earlier_summary>\nFIRST SUMMARY\n</earlier_summary>" in second.text
    assert "<summary>\nSECOND SUMMARY\n</summary>" in second.text

    latest = [second, user("And a car"), agent("Car booked.")]
    [third] = await compact(glove, config, latest)
    assert third.text.index("FIRST SUMMARY") < third.text.index("SECOND SUMMARY")
    assert third.text.count("<earlier_summary>") == 2
    assert "<summary>\nTHIRD SUMMARY\n</summary>" in third.text


async def test_our_tags_inside_content_cannot_break_the_next_compaction() -> None:
    glove = await make_glove(["tricky </summary> <earlier_summary> text", "NEXT"])
    history = await saved(glove, conversation())
    [first] = await compact(glove, CompactionConfig(keep_last=0), history)
    [second] = await compact(glove, CompactionConfig(keep_last=0), [first, user("a"), agent("b")])
    assert "&lt;/summary> &lt;earlier_summary> text" in second.text
    assert second.text.count("<earlier_summary>") == 1


async def test_tasks_and_pending_inbox_items_are_carried() -> None:
    store = MemoryStore()
    await store.set_tasks([Task(id="t1", content="book hotel", status="in_progress")])
    for item_id, status in (("i1", "pending"), ("i2", "consumed")):
        await store.add_inbox_item(
            InboxItem(
                id=item_id,
                tag="approval",
                request=f"request {item_id}",
                status=status,
                blocking=True,
                created_at="2026-01-01",
            )
        )
    glove = await make_glove([fail], store)
    history = await saved(glove, conversation())
    [summary] = await compact(glove, CompactionConfig(), history)
    assert "<task_list>\n- [in_progress] t1: book hotel\n</task_list>" in summary.text
    assert (
        "<pending_inbox>\n- i1 [approval] (blocking): request i1\n</pending_inbox>" in summary.text
    )
    assert "request i2" not in summary.text


async def test_a_tool_call_is_never_separated_from_its_result() -> None:
    glove = await make_glove(["S", "S"])
    call = ToolCall(id="c7", name="lookup", input={})
    history = await saved(glove, [user("go"), agent("", call), results((call, "success"))])

    [summary] = await compact(glove, CompactionConfig(keep_last=1), history)
    recent = summary.text.split("<recent_messages>")[1]
    assert "[tool call lookup c7]" in recent and "[tool result lookup c7: success]" in recent

    waiting = [user("go"), agent("", call)]
    config = CompactionConfig(context_limit=1_000, threshold=0.01)
    assert await maybe_compact(glove, config, waiting, Usage(input_tokens=999), []) is None
    with pytest.raises(ValueError, match="tool calls that have no results yet"):
        await compact(glove, config, waiting)
    with pytest.raises(ValueError, match="nothing since the last summary"):
        await compact(glove, config, [summary])


async def test_an_aborted_summary_call_saves_nothing() -> None:
    started = asyncio.Event()

    async def hang(request: ModelRequest) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    glove = await make_glove([hang])
    history = await saved(glove, conversation())
    controller = AbortController()
    task = asyncio.create_task(
        compact(glove, CompactionConfig(), history, signal=controller.signal)
    )
    await started.wait()
    controller.abort("user pressed stop")
    with pytest.raises(AbortError):
        await task
    assert await glove.store.get_messages() == history


async def test_summary_usage_uses_the_models_report() -> None:
    class FixedModel:
        name = "fixed"

        async def prompt(self, request: ModelRequest, notify: Any, signal: Any = None) -> Any:
            return ModelResponse(agent("S"), Usage(input_tokens=7, output_tokens=3))

    store = MemoryStore()
    glove = Glove(model=FixedModel(), system_prompt="s", store=store).build()
    history = await saved(glove, conversation())
    await compact(glove, CompactionConfig(), history)
    assert await store.get_usage() == Usage(input_tokens=7, output_tokens=3)


async def test_the_summary_transcript_fits_the_context_window() -> None:
    glove = await make_glove(["S"])
    long_history = [m for n in range(400) for m in (user(f"question {n} " * 20), agent("ok"))]
    history = await saved(glove, long_history)
    config = CompactionConfig(context_limit=2_000, chars_per_token=4.0)
    await compact(glove, config, history)
    transcript = glove.model.requests[0].messages[0].text  # type: ignore[attr-defined]
    assert len(transcript) < 2_000 * 4
    assert "question 0 " in transcript and "question 399 " in transcript
    assert "characters omitted" in transcript
