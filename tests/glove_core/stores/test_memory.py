"""MemoryStore keeps its own copies: nothing a caller does to messages reaches saved history."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from glove_core import (
    MemoryStore,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultData,
)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@dataclass
class Point:
    """A non-JSON value a tool might put in ``data``."""

    x: int
    tags: list[str]


def _agent_reply(data: Any = None) -> list[Message]:
    return [
        Message(
            sender="agent",
            text="checking",
            tool_calls=[ToolCall(id="c1", name="lookup", input={"city": "Paris", "n": [1, 2]})],
        ),
        Message(
            sender="user",
            tool_results=[
                ToolResult(
                    call_id="c1",
                    name="lookup",
                    result=ToolResultData(data=data, render_data={"rows": [1]}),
                )
            ],
        ),
        Message(sender="user", text="and this", content=[TextPart(text="and this")]),
    ]


def _mutables(value: Any) -> list[Any]:
    """Every mutable container and model reachable from ``value`` (cycles visited once)."""
    seen: dict[int, Any] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str | int | float | bool | bytes | type(None)) or id(item) in seen:
            continue
        seen[id(item)] = item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif hasattr(item, "__dict__"):
            stack.extend(vars(item).values())
    return list(seen.values())


def _shares_nothing(a: Any, b: Any) -> bool:
    return not ({id(x) for x in _mutables(a)} & {id(x) for x in _mutables(b)})


async def test_get_messages_returns_copies_callers_may_change() -> None:
    store = MemoryStore("c")
    messages = _agent_reply(data={"rows": [{"id": 1}]})
    await store.append_messages(messages)
    first = await store.get_messages()
    assert first == messages
    assert _shares_nothing(first, messages)

    first[0].text = "changed"
    assert first[0].tool_calls is not None
    first[0].tool_calls[0].input["n"].append(3)
    assert first[1].tool_results is not None
    first[1].tool_results[0].result.data["rows"].clear()
    assert first[2].content is not None
    first[2].content.append(TextPart(text="extra"))

    assert await store.get_messages() == messages


async def test_append_messages_copies_on_the_way_in() -> None:
    store = MemoryStore("c")
    messages = _agent_reply(data=[1, 2])
    expected = copy.deepcopy(messages)
    await store.append_messages(messages)
    assert messages[0].tool_calls is not None
    messages[0].tool_calls[0].input["city"] = "Lyon"
    assert messages[1].tool_results is not None
    messages[1].tool_results[0].result.data.append(3)

    saved = await store.get_messages()
    assert saved == expected
    assert _shares_nothing(saved, messages)


async def test_copies_keep_fields_set_shared_references_and_cycles() -> None:
    shared = {"k": [1]}
    cyclic: list[Any] = ["head"]
    cyclic.append(cyclic)
    point = Point(1, ["a"])
    store = MemoryStore("c")
    data_in = {"a": shared, "b": shared, "c": cyclic, "p": point}
    await store.append_messages(_agent_reply(data=data_in))

    saved = await store.get_messages()
    assert saved[1].tool_results is not None
    data = saved[1].tool_results[0].result.data
    assert data["a"] is data["b"] and data["a"] == shared and data["a"] is not shared
    assert data["c"][1] is data["c"] and data["c"] is not cyclic
    assert data["p"] == point and data["p"] is not point and data["p"].tags is not point.tags
    # Which fields were set explicitly survives too (it drives model_dump(exclude_unset=True)).
    original = _agent_reply()
    for got, want in zip(saved, original, strict=True):
        assert got.model_fields_set == want.model_fields_set
    assert original[1].tool_results is not None
    got_result = saved[1].tool_results[0].result
    assert got_result.model_fields_set == original[1].tool_results[0].result.model_fields_set


@given(data=json_values, render=json_values, tool_input=st.dictionaries(st.text(), json_values))
def test_round_trip_equals_deepcopy_and_shares_nothing(
    data: Any, render: Any, tool_input: dict[str, Any]
) -> None:
    messages = [
        Message(sender="agent", tool_calls=[ToolCall(id="c", name="t", input=tool_input)]),
        Message(
            sender="user",
            tool_results=[
                ToolResult(
                    call_id="c",
                    name="t",
                    result=ToolResultData(data=data, render_data=render),
                )
            ],
        ),
    ]

    async def round_trip() -> list[Message]:
        store = MemoryStore("p")
        await store.append_messages(messages)
        return await store.get_messages()

    saved = asyncio.run(round_trip())
    assert saved == copy.deepcopy(messages)
    assert _shares_nothing(saved, messages)
