"""Which form of a tool result the model reads (``glove_mcp.mount._structured``): structured
content, or the text when the structured part is mostly binary or much larger than the text;
never base64 the model cannot use; and ``isError`` passed through exactly, whatever the text
says."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server

from glove_core import Glove, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.mount.bridge import convert_call_result
from glove_mcp.testing import serve
from glove_mcp.types import McpCallResult, McpTextContent

PDF_BYTES = base64.b64encode(b"%PDF-1.7\n" + os.urandom(30_000)).decode()


def _pdf_server() -> Server[Any]:
    """Like the PDF server's ``read_pdf_bytes``: a short text and a structured result holding
    the file's bytes in base64."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tool = types.Tool(name="read_pdf_bytes", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(text="Read report.pdf: 2 pages, 30,009 bytes.")],
            structured_content={
                "name": "report.pdf",
                "mimeType": "application/pdf",
                "bytes": PDF_BYTES,
            },
        )

    return Server("pdf", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_a_short_text_beats_a_structured_result_of_base64() -> None:
    async with serve(_pdf_server()) as url:
        model = ScriptedModel([[ToolCall(id="c", name="pdf__read_pdf_bytes", input={})], "done"])
        glove = Glove(model=model, system_prompt="test", server_mode=True)
        entry = McpCatalogueEntry(id="pdf", name="PDF", description="d", url=url)
        adapter = MemoryMcpAdapter("conv", active=["pdf"])
        async with await mount_mcp(glove, adapter, [entry], mark_untrusted=False):
            glove.build()
            assert (await glove.process_request("read it")).text == "done"
    [result] = [r.result for m in model.requests[-1].messages for r in m.tool_results or []]
    assert result.status == "success"
    assert isinstance(result.data, str)
    assert result.data.startswith("Read report.pdf: 2 pages, 30,009 bytes.\n")
    assert "mostly binary data" in result.data
    assert PDF_BYTES[:64] not in json.dumps(result.model_dump(mode="json"))


def _convert(text: str, structured: Any, max_chars: int = 10_000) -> Any:
    content = (McpTextContent(text=text),) if text else ()
    result = McpCallResult(content=content, structured_content=structured)
    return convert_call_result("s", "t", result, max_result_chars=max_chars).data


def test_structured_content_is_preferred_when_it_is_data() -> None:
    structured = {"temperature": 22, "conditions": "sunny"}
    assert _convert(json.dumps(structured), structured) == structured
    assert _convert("22 degrees", structured) == structured


def test_a_few_binary_strings_become_placeholders() -> None:
    blob = base64.b64encode(os.urandom(600)).decode()
    title = "A long title. " * 150
    structured = {"title": title, "thumbnail": blob}
    data = _convert("A page.", structured)
    assert data["title"] == title
    assert data["thumbnail"] == f"[binary data: {len(blob):,} characters of base64, not shown]"
    # Without text, the structured content is read, never its base64.
    assert _convert("", {"bytes": blob}) == {
        "bytes": f"[binary data: {len(blob):,} characters of base64, not shown]"
    }


def test_the_text_is_read_when_the_structured_part_is_much_larger() -> None:
    structured = {"rows": [{"id": n, "name": f"row {n}"} for n in range(500)]}
    data = _convert("500 rows.", structured, max_chars=2_000)
    assert isinstance(data, str)
    assert data.startswith("500 rows.\n")
    assert "much larger than the text" in data


def test_short_ids_and_hashes_are_not_taken_for_binary() -> None:
    structured = {"sha256": "a" * 64, "id": "Zm9vYmFy" * 10, "run": "x" * 1_000}
    assert _convert("ok", structured) == structured


def _context7_like() -> Server[Any]:
    """A tool answering with error-looking text under ``isError`` false (as ``context7`` does
    offline), and one answering ``isError`` true with a calm text."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name="search", input_schema={"type": "object"}),
                types.Tool(name="fail", input_schema={"type": "object"}),
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "search":
            text = "Error searching libraries: TypeError: fetch failed"
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=False)
        return types.CallToolResult(content=[types.TextContent(text="all good")], is_error=True)

    return Server("c7", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_is_error_is_passed_through_exactly() -> None:
    async with serve(_context7_like()) as url:
        calls = [ToolCall(id="s", name="c7__search", input={})]
        calls.append(ToolCall(id="f", name="c7__fail", input={}))
        model = ScriptedModel([calls, "done"])
        glove = Glove(model=model, system_prompt="test", server_mode=True)
        entry = McpCatalogueEntry(id="c7", name="C7", description="d", url=url)
        adapter = MemoryMcpAdapter("conv", active=["c7"])
        async with await mount_mcp(glove, adapter, [entry], mark_untrusted=False):
            glove.build()
            assert (await glove.process_request("search")).text == "done"
    got = {r.call_id: r.result for m in model.requests[-1].messages for r in m.tool_results or []}
    assert got["s"].status == "success"
    assert got["s"].data == "Error searching libraries: TypeError: fetch failed"
    assert got["f"].status == "error"
    assert got["f"].message == "tool 'fail' of MCP server 'c7' failed: all good"
