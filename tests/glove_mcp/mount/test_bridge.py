"""Bridged tools: names, schemas, results and permissions, run through a real Glove against the
local servers over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import mcp_types as sdk
import pytest
from hypothesis import given
from hypothesis import strategies as st

from glove_core import (
    AbortController,
    AbortError,
    Glove,
    ImagePart,
    MemoryStore,
    ModelRequest,
    ScriptedModel,
    Tool,
    ToolCall,
    ToolResult,
    ToolResultData,
)
from glove_mcp import (
    MCP_NAMESPACE_SEP,
    McpCallResult,
    McpServerConnection,
    bearer,
    bridge_mcp_tool,
    connect_mcp,
    json_schema_to_shape,
)
from glove_mcp.connect import ProtocolChoice
from glove_mcp.mount.bridge import (
    bridged_tool_name,
    convert_call_result,
    idempotency_key,
)
from glove_mcp.testing import McpTestServer, ServerControl, serve
from glove_mcp.testing.servers import TINY_PNG
from glove_mcp.types import McpTextContent

_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # used with fullmatch: "$" would accept a final "\n"


@pytest.fixture
async def notes() -> AsyncIterator[McpServerConnection]:
    async with McpTestServer("notes") as server, await connect_mcp("notes", server.url) as conn:
        yield conn


async def _tools(conn: McpServerConnection, server_mode: bool = True) -> dict[str, Tool]:
    bridged = [bridge_mcp_tool(conn, t, server_mode) for t in await conn.list_tools()]
    return {tool.name: tool for tool in bridged}


async def _run(
    conn: McpServerConnection,
    name: str,
    args: dict[str, Any],
    before_call: Callable[[], None] | None = None,
) -> ToolResult:
    """Fold every bridged tool into a Glove and let a scripted model call one (``before_call``
    runs after the tools were folded, right before the model asks for the call)."""

    def call(request: ModelRequest) -> list[ToolCall]:
        if before_call is not None:
            before_call()
        return [ToolCall(id="c1", name=name, input=args)]

    model = ScriptedModel([call, "done"])
    glove = Glove(model=model, system_prompt="test", server_mode=True)
    for tool in (await _tools(conn)).values():
        glove.fold(tool)
    result = await glove.build().process_request("go")
    assert result.text == "done"
    results = [r for m in result.messages for r in (m.tool_results or [])]
    assert len(results) == 1
    # The model saw the namespaced names and the server's schema.
    spec = {s.name: s for s in model.requests[0].tools}[name]
    assert spec.input_schema["type"] == "object"
    return results[0]


# -- names -------------------------------------------------------------------------------------


def test_valid_names_pass_through_unchanged() -> None:
    assert MCP_NAMESPACE_SEP == "__"
    assert bridged_tool_name("notion", "search") == "notion__search"


def test_invalid_or_long_names_are_sanitised_with_a_hash() -> None:
    dotted = bridged_tool_name("notion", "pages.search")
    assert _VALID.fullmatch(dotted) and dotted.startswith("notion__pages_search_")
    underscored = bridged_tool_name("notion", "pages_search")
    assert underscored == "notion__pages_search" != dotted
    long = bridged_tool_name("srv", "x" * 100)
    assert len(long) == 64 and _VALID.fullmatch(long)
    assert long != bridged_tool_name("srv", "x" * 101)


@given(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,30}", fullmatch=True),
    st.text(min_size=1, max_size=120),
    st.text(min_size=1, max_size=120),
)
def test_names_are_valid_and_distinct_names_stay_distinct(ns: str, a: str, b: str) -> None:
    name_a, name_b = bridged_tool_name(ns, a), bridged_tool_name(ns, b)
    assert _VALID.fullmatch(name_a)
    assert _VALID.fullmatch(name_b)
    assert (name_a == name_b) == (a == b)
    full = f"{ns}__{a}"
    if _VALID.fullmatch(full):
        assert name_a == full


# -- schemas -----------------------------------------------------------------------------------


def test_json_schema_to_shape() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "state": {"enum": ["open", "done"]},
            "owner": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}]},
            "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["id", "state"],
        "$defs": {"User": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    assert json_schema_to_shape(schema) == (
        '{id: string, tags?: [string], state: "open" | "done", '
        "owner?: {name?: string} | null, meta?: {[key: string]: integer}}"
    )
    recursive = {
        "$ref": "#/$defs/N",
        "$defs": {"N": {"properties": {"next": {"$ref": "#/$defs/N"}}}},
    }
    assert json_schema_to_shape(recursive) == "{next?: N}"
    assert json_schema_to_shape({}) == "any"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    )
)
def test_shape_never_raises_on_arbitrary_json(value: Any) -> None:
    shape = json_schema_to_shape(value if isinstance(value, dict) else {"items": value})
    assert isinstance(shape, str) and len(shape) <= 600


async def test_bridged_tool_carries_schema_description_and_permissions(
    notes: McpServerConnection,
) -> None:
    interactive = await _tools(notes, server_mode=False)
    headless = await _tools(notes, server_mode=True)
    read = interactive["notes__read_page"]
    assert read.json_schema is not None and read.json_schema["required"] == ["page_id"]
    assert "Returns: {id: string, title: string, body: string}" in read.description
    assert read.requires_permission is False
    assert interactive["notes__create_page"].requires_permission is True
    assert not any(t.requires_permission for t in headless.values())


async def test_destructive_tool_needs_permission_when_interactive() -> None:
    async with serve("tracker") as url, await connect_mcp("tracker", url) as conn:
        tools = await _tools(conn, server_mode=False)
    assert tools["tracker__delete_issue"].requires_permission is True
    assert tools["tracker__list_issues"].requires_permission is False


# -- results through a Glove -------------------------------------------------------------------


async def test_structured_result_reaches_the_model(notes: McpServerConnection) -> None:
    result = await _run(notes, "notes__read_page", {"page_id": "p1"})
    assert result.result.status == "success"
    assert result.result.data == {"id": "p1", "title": "Roadmap", "body": "Ship glove_mcp in Q1."}
    assert result.result.render_data[0]["type"] == "text"


async def test_text_only_result_is_joined(notes: McpServerConnection) -> None:
    result = await _run(notes, "notes__read_page_text", {"page_id": "p2"})
    assert result.result.data == "Meeting notes\nDiscussed the roadmap and hiring."


async def test_image_becomes_a_content_part(notes: McpServerConnection) -> None:
    import base64

    result = await _run(notes, "notes__page_cover", {"page_id": "p1"})
    assert result.result.data == "Cover of Roadmap"
    assert result.result.content == [
        ImagePart(media_type="image/png", data=base64.b64encode(TINY_PNG).decode())
    ]
    kinds = [block["type"] for block in result.result.render_data]
    assert kinds == ["text", "image"]


async def test_audio_becomes_a_placeholder_and_stays_in_render_data(
    notes: McpServerConnection,
) -> None:
    result = await _run(notes, "notes__page_memo", {"page_id": "p1"})
    assert result.result.data.startswith("Memo for Roadmap\n[audio: audio/wav, 44 bytes")
    assert result.result.content is None
    assert result.result.render_data[1]["type"] == "audio"


async def test_server_error_becomes_an_error_result(notes: McpServerConnection) -> None:
    result = await _run(notes, "notes__read_page", {"page_id": "missing"})
    assert result.result.status == "error"
    assert result.result.message is not None
    assert "'read_page' of MCP server 'notes' failed" in result.result.message
    assert "no page with id 'missing'" in result.result.message


async def test_large_result_is_cut_with_a_notice(notes: McpServerConnection) -> None:
    tools = await _tools(notes)
    tool = bridge_mcp_tool(
        notes,
        next(t for t in await notes.list_tools() if t.name == "export_pages"),
        True,
        max_result_chars=100,
    )
    assert tool.name in tools
    data = await tool.do({"repeat": 50}, None)  # type: ignore[arg-type]
    assert isinstance(data, ToolResultData)
    assert data.data.startswith("# Roadmap")
    notice = data.data[100:]
    match = re.search(r"showing 100 of ([\d,]+) characters \(([\d,]+) cut\)", notice)
    assert match is not None
    total = int(match.group(1).replace(",", ""))
    assert int(match.group(2).replace(",", "")) == total - 100


def test_structured_result_over_the_limit_is_cut() -> None:
    structured = {"items": ["a" * 50] * 10}
    # The text repeats the structured content, as the specification asks servers to.
    result = McpCallResult(
        content=(McpTextContent(text=json.dumps(structured)),), structured_content=structured
    )
    data = convert_call_result("s", "t", result, max_result_chars=80)
    assert isinstance(data.data, str)
    assert data.data.startswith('{"items": ["aaaa')
    assert "cut)" in data.data


async def test_auth_expired_is_a_result_not_an_exception() -> None:
    control = ServerControl(tokens={"good"})
    async with (
        serve("notes", control=control) as url,
        await connect_mcp("notes", url, auth=bearer("good")) as conn,
    ):

        def rotate() -> None:
            control.tokens = {"someone-else"}

        result = await _run(conn, "notes__read_page", {"page_id": "p1"}, before_call=rotate)
    assert result.result.status == "error"
    assert result.result.message == "auth_expired"
    assert result.result.data["server"] == "notes"
    assert result.result.data["tool"] == "read_page"
    assert "good" not in str(result.result.data)


async def test_unreachable_server_is_an_error_result_naming_it() -> None:
    server = McpTestServer("notes")
    await server.start()
    conn = await connect_mcp("notes", server.url)
    tools = await _tools(conn)
    await server.stop()
    try:
        # Bridged tools never read their context.
        data = await tools["notes__read_page"].do({"page_id": "p1"}, None)  # type: ignore[arg-type]
    finally:
        await conn.close()
    assert data.status == "error"
    assert "MCP server 'notes'" in data.message and "unreachable" in data.message


async def test_sanitised_name_calls_the_real_tool() -> None:
    calls: list[str] = []

    from mcp.server.lowlevel.server import Server

    # The server side is written with the SDK, as a server author would.
    async def list_tools(ctx: Any, params: Any) -> sdk.ListToolsResult:
        return sdk.ListToolsResult(
            tools=[sdk.Tool(name="pages.search", input_schema={"type": "object"})]
        )

    async def call_tool(ctx: Any, params: sdk.CallToolRequestParams) -> sdk.CallToolResult:
        calls.append(params.name)
        return sdk.CallToolResult(content=[sdk.TextContent(text="found")])

    server = Server("dotted", on_list_tools=list_tools, on_call_tool=call_tool)
    async with serve(server) as url, await connect_mcp("dotted", url) as conn:
        [tool] = (await _tools(conn)).values()
        assert tool.name.startswith("dotted__pages_search_")
        result = await _run(conn, tool.name, {})
    assert result.result.data == "found"
    assert calls == ["pages.search"]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_aborting_a_request_stops_waiting_on_a_stalled_server(
    protocol: ProtocolChoice,
) -> None:
    async with (
        McpTestServer("notes") as server,
        await connect_mcp("notes", server.url, protocol=protocol) as conn,
    ):
        store = MemoryStore()
        read = ToolCall(id="c1", name="notes__read_page", input={"page_id": "p1"})
        glove = Glove(model=ScriptedModel([[read]]), system_prompt="t", store=store)
        for tool in (await _tools(conn)).values():
            glove.fold(tool)
        glove.build()
        controller = AbortController()
        server.control.stall()
        request = asyncio.create_task(glove.process_request("go", signal=controller.signal))
        await server.control.wait_stalled()
        controller.abort("user pressed Ctrl-C")
        # Bounded: the SDK would wait up to 5 s to tell a stalled server the call is cancelled.
        done, _ = await asyncio.wait({request}, timeout=2.5)
        assert done, "the aborted request waited on the stalled server"
        with pytest.raises(AbortError):
            request.result()
        saved = (await store.get_messages())[-1].tool_results or []
        assert [r.result.status for r in saved] == ["aborted"]
        server.control.release()
        # The connection still works.
        assert (await conn.call_tool("read_page", {"page_id": "p1"})).is_error is False


async def test_read_only_and_idempotent_hints_make_a_bridged_tool_idempotent(
    notes: McpServerConnection,
) -> None:
    tools = await _tools(notes)
    assert tools["notes__search_pages"].idempotent  # readOnlyHint
    assert not tools["notes__create_page"].idempotent  # no hints: may act twice


def test_the_idempotency_key_is_stable_per_call_and_reveals_no_id() -> None:
    key = idempotency_key("session-1", "toolu_1")
    assert key == idempotency_key("session-1", "toolu_1")
    assert key != idempotency_key("session-1", "toolu_2")
    assert key != idempotency_key("session-2", "toolu_1")
    assert "session" not in key and "toolu" not in key
