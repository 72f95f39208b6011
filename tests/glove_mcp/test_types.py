"""glove_mcp's tool and result types (glove_mcp.types), converted from the SDK's at the
connection (glove_mcp.connect._convert): nothing is lost that a bridged tool or an application
reads, and a content block dumps to the same MCP JSON the SDK's does."""

from __future__ import annotations

from typing import Any

import mcp_types as sdk
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from glove_mcp import McpCallResult, McpTool
from glove_mcp.connect._convert import call_result_from_sdk, content_from_sdk, tool_from_sdk
from glove_mcp.types import McpEmbeddedResource, McpImageContent, McpTextContent, McpToolAnnotations

NOTE = sdk.Annotations(audience=["assistant"], priority=0.5)
BLOCKS: list[sdk.ContentBlock] = [
    sdk.TextContent(text="hello", annotations=NOTE),
    sdk.ImageContent(data="aGk=", mime_type="image/png"),
    sdk.AudioContent(data="aGk=", mime_type="audio/wav", annotations=NOTE),
    sdk.ResourceLink(uri="demo://a", name="A", title="The A", mime_type="text/plain", size=3),
    sdk.EmbeddedResource(
        resource=sdk.TextResourceContents(uri="demo://t", mime_type="text/plain", text="body")
    ),
    sdk.EmbeddedResource(
        resource=sdk.BlobResourceContents(uri="demo://b", mime_type="application/gzip", blob="eA==")
    ),
]


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: str(b.type))
def test_a_content_block_dumps_to_the_same_mcp_json(block: sdk.ContentBlock) -> None:
    assert _wire(content_from_sdk(block)) == _wire(block)


def test_a_call_result_keeps_content_structure_and_error() -> None:
    given_result = sdk.CallToolResult(content=BLOCKS, structured_content={"n": 1}, is_error=True)
    result = call_result_from_sdk(given_result)
    assert isinstance(result, McpCallResult)
    assert [_wire(b) for b in result.content] == [_wire(b) for b in BLOCKS]
    assert result.structured_content == {"n": 1}
    assert result.is_error is True
    assert result.text == "hello"
    embedded = result.content[4]
    assert isinstance(embedded, McpEmbeddedResource)
    assert (embedded.resource.text, embedded.resource.blob) == ("body", None)


def test_a_tool_keeps_what_bridging_and_filters_read() -> None:
    tool = tool_from_sdk(
        sdk.Tool(
            name="read",
            title="Read",
            description="Read a page.",
            input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
            output_schema={"type": "object"},
            annotations=sdk.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            execution=sdk.ToolExecution(task_support="optional"),
        )
    )
    assert tool == McpTool(
        name="read",
        title="Read",
        description="Read a page.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
        output_schema={"type": "object"},
        annotations=McpToolAnnotations(read_only_hint=True, open_world_hint=False),
        task_support="optional",
    )
    assert tool.read_only
    bare = tool_from_sdk(sdk.Tool(name="x", input_schema={"type": "object"}))
    assert bare.annotations == McpToolAnnotations()
    assert not bare.read_only and bare.task_support is None
    assert _wire(bare) == {"name": "x", "inputSchema": {"type": "object"}, "annotations": {}}


def test_the_types_are_frozen_and_strict() -> None:
    tool = McpTool(name="x")
    with pytest.raises(ValidationError, match="frozen"):
        tool.name = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs"):
        McpTool.model_validate({"name": "x", "inputSchema": {}})
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        McpCallResult.model_validate({"content": [{"type": "video", "data": ""}]})


@given(st.text(), st.text(min_size=1).filter(str.strip))
def test_text_and_images_survive_conversion(text: str, mime: str) -> None:
    result = call_result_from_sdk(
        sdk.CallToolResult(
            content=[sdk.TextContent(text=text), sdk.ImageContent(data="", mime_type=mime)]
        )
    )
    assert result.content == (McpTextContent(text=text), McpImageContent(data="", mime_type=mime))
