"""@tool schema generation, docstring parsing and input validation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from glove_core import (
    Glove,
    MemoryStore,
    ScriptedModel,
    Tool,
    ToolCall,
    ToolContext,
    ToolResultData,
    tool,
)
from glove_core.errors import ToolDefinitionError
from glove_core.tools import ToolInputError, parse_docstring


def test_docstring_google_style() -> None:
    summary, args = parse_docstring(
        """Find pages.

        Searches titles and bodies.

        Args:
            query (str): the words to look for,
                over several lines.
            limit: at most this many.

        Returns:
            The pages.
        """
    )
    assert summary == "Find pages.\n\nSearches titles and bodies."
    assert args == {
        "query": "the words to look for, over several lines.",
        "limit": "at most this many.",
    }
    assert parse_docstring(None) == ("", {})


class Filter(BaseModel):
    status: Literal["open", "closed"]


def test_tool_schema_from_hints_defaults_and_docstring() -> None:
    @tool(requires_permission=True, parallel_safe=True)
    async def search_pages(
        query: str, ctx: ToolContext, limit: int = 10, where: Filter | None = None
    ) -> list[str]:
        """Find pages.

        Args:
            query: the words to look for.
            limit: at most this many.
        """
        return []

    assert search_pages.name == "search_pages"
    assert search_pages.description == "Find pages."
    assert search_pages.requires_permission and search_pages.parallel_safe
    schema = search_pages.spec.input_schema
    assert set(schema["properties"]) == {"query", "limit", "where"}  # ctx is not model input
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"]["description"] == "the words to look for."
    assert schema["properties"]["limit"]["default"] == 10
    assert schema["additionalProperties"] is False


def test_tool_name_and_description_overrides() -> None:
    @tool(name="renamed", description="Custom.")
    def f(x: int) -> int:
        return x

    assert (f.name, f.description) == ("renamed", "Custom.")


def test_unresolvable_hint_is_a_clear_error() -> None:
    def local_types() -> Any:
        class Local(BaseModel):
            a: int

        def f(x: Local) -> None:  # a string hint under postponed evaluation
            return None

        return f

    with pytest.raises(ToolDefinitionError, match="cannot resolve the type hints"):
        tool(local_types())


def test_bad_tool_definitions_raise_clear_errors() -> None:
    with pytest.raises(ToolDefinitionError, match="needs a type hint"):
        tool(lambda x: x)
    with pytest.raises(ToolDefinitionError, match=r"\*args/\*\*kwargs"):

        @tool
        def g(*items: int) -> int:
            return 0

    async def do(input: Any, ctx: ToolContext) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="invalid"):
        Tool(name="has space", description="d", do=do)
    with pytest.raises(ToolDefinitionError, match="invalid"):
        Tool(name="x" * 65, description="d", do=do)

    class In(BaseModel):
        a: int

    with pytest.raises(ToolDefinitionError, match="exactly one"):
        Tool(name="both", description="d", do=do, input_model=In, json_schema={})


def test_parse_input_reports_every_bad_field() -> None:
    @tool
    def pair(a: int, b: str) -> str:
        return b * a

    with pytest.raises(ToolInputError) as info:
        pair.parse_input({"a": "not a number"})
    message = str(info.value)
    assert "field 'a'" in message and "field 'b'" in message
    assert "call the tool again" in message


async def test_sync_tool_runs_off_the_event_loop_and_async_on_it() -> None:
    loop_thread = threading.get_ident()
    threads: dict[str, int] = {}

    @tool
    def blocking(x: int) -> int:
        threads["sync"] = threading.get_ident()
        return x * 2

    @tool
    async def nonblocking(x: int, ctx: ToolContext) -> int:
        threads["async"] = threading.get_ident()
        assert ctx.call_id == "c2"
        await asyncio.sleep(0)
        return x + 1

    store = MemoryStore()
    model = ScriptedModel(
        [
            [
                ToolCall(id="c1", name="blocking", input={"x": 2}),
                ToolCall(id="c2", name="nonblocking", input={"x": 2}),
            ],
            "done",
        ]
    )
    glove = Glove(model=model, system_prompt="s", store=store)
    glove.fold(blocking).fold(nonblocking).build()
    await glove.process_request("go")
    results = (await store.get_messages())[2].tool_results
    assert results is not None
    assert [r.result for r in results] == [ToolResultData(data=4), ToolResultData(data=3)]
    assert threads["async"] == loop_thread
    assert threads["sync"] != loop_thread


def test_tool_without_schema_takes_an_empty_object() -> None:
    async def do(input: Any, ctx: ToolContext) -> None:
        return None

    bare = Tool(name="bare", description="d", do=do)
    assert bare.spec.input_schema == {"type": "object", "properties": {}}
    assert bare.parse_input({"x": 1}) == {"x": 1}


def test_tools_of_one_input_model_get_equal_schemas_they_can_edit_alone() -> None:
    # The schema is generated once per model class; each tool still gets its own copy.
    class Input(BaseModel):
        tags: list[str]

    def do(input: Any, ctx: ToolContext) -> None:
        return None

    first = Tool(name="first", description="d", do=do, input_model=Input)
    second = Tool(name="second", description="d", do=do, input_model=Input)
    assert first.spec.input_schema == second.spec.input_schema == Input.model_json_schema()
    first.spec.input_schema["properties"]["tags"]["items"]["type"] = "integer"
    assert second.spec.input_schema == Input.model_json_schema()
