"""Every boundary type survives a JSON round trip unchanged."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from glove_core import (
    DocumentPart,
    ImagePart,
    InboxItem,
    Message,
    Task,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultData,
    Usage,
)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
parts = st.one_of(
    st.builds(TextPart, text=st.text()),
    st.builds(
        ImagePart,
        media_type=st.sampled_from(["image/png", "image/jpeg"]),
        data=st.none() | st.text(max_size=20),
        url=st.none() | st.text(max_size=20),
    ),
    st.builds(
        DocumentPart,
        media_type=st.just("application/pdf"),
        data=st.none() | st.text(max_size=20),
        title=st.none() | st.text(max_size=10),
    ),
)
calls = st.builds(
    ToolCall,
    id=st.text(min_size=1, max_size=8),
    name=st.text(max_size=8),
    input=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)
result_data = st.builds(
    ToolResultData,
    status=st.sampled_from(["success", "error", "aborted"]),
    data=json_values,
    message=st.none() | st.text(),
    render_data=json_values,
    content=st.none() | st.lists(parts, max_size=2),
    tool_references=st.none() | st.lists(st.text(), max_size=3),
)
results = st.builds(
    ToolResult, call_id=st.text(max_size=8), name=st.text(max_size=8), result=result_data
)
messages = st.builds(
    Message,
    sender=st.sampled_from(["user", "agent"]),
    text=st.text(),
    content=st.none() | st.lists(parts, max_size=3),
    tool_calls=st.none() | st.lists(calls, max_size=3),
    tool_results=st.none() | st.lists(results, max_size=3),
    is_compaction=st.booleans(),
    framework_context=st.sampled_from([None, "runtime", "event", "inbox"]),
)


@given(messages)
def test_message_json_round_trip(message: Message) -> None:
    assert Message.model_validate_json(message.model_dump_json()) == message


@given(st.lists(messages, max_size=4))
def test_history_json_round_trip(history: list[Message]) -> None:
    adapter = TypeAdapter(list[Message])
    assert adapter.validate_json(adapter.dump_json(history)) == history


@given(
    st.builds(
        Usage,
        input_tokens=st.integers(0, 10**9),
        output_tokens=st.integers(0, 10**9),
        cache_read_tokens=st.integers(0, 10**9),
        cache_write_tokens=st.integers(0, 10**9),
    )
)
def test_usage_round_trip_and_sum(usage: Usage) -> None:
    assert Usage.model_validate_json(usage.model_dump_json()) == usage
    doubled = usage + usage
    assert doubled.input_tokens == 2 * usage.input_tokens
    assert doubled.cache_write_tokens == 2 * usage.cache_write_tokens


def test_task_and_inbox_round_trip() -> None:
    task = Task(id="t1", content="write tests", status="in_progress")
    item = InboxItem(
        tag="restock",
        request="tell me when it's back",
        blocking=True,
        created_at="2026-11-30T00:00:00Z",
    )
    assert Task.model_validate_json(task.model_dump_json()) == task
    assert InboxItem.model_validate_json(item.model_dump_json()) == item
    assert item.id.startswith("inbox_")


def test_messages_get_unique_ids() -> None:
    assert Message(sender="user").id != Message(sender="user").id
