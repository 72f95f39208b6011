"""The SDK's tool and result models turned into glove_mcp's (``glove_mcp.types``).

Called where the SDK hands them over (``McpServerConnection``), so nothing past the connection
sees an ``mcp_types`` object.
"""

from __future__ import annotations

import mcp_types as sdk

from glove_mcp.types import (
    McpAudioContent,
    McpCallResult,
    McpContent,
    McpContentAnnotations,
    McpEmbeddedResource,
    McpImageContent,
    McpResourceContents,
    McpResourceLink,
    McpTextContent,
    McpTool,
    McpToolAnnotations,
)

__all__ = ["call_result_from_sdk", "content_from_sdk", "tool_from_sdk"]

_NO_ANNOTATIONS = McpToolAnnotations()


def tool_from_sdk(tool: sdk.Tool) -> McpTool:
    """glove_mcp's ``McpTool`` for a tool the SDK listed."""
    hints = tool.annotations
    return McpTool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=_NO_ANNOTATIONS
        if hints is None
        else McpToolAnnotations(
            title=hints.title,
            read_only_hint=hints.read_only_hint,
            destructive_hint=hints.destructive_hint,
            idempotent_hint=hints.idempotent_hint,
            open_world_hint=hints.open_world_hint,
        ),
        task_support=tool.execution.task_support if tool.execution is not None else None,
    )


def _annotations(given: sdk.Annotations | None) -> McpContentAnnotations | None:
    if given is None:
        return None
    return McpContentAnnotations(
        audience=tuple(given.audience) if given.audience is not None else None,
        priority=given.priority,
        last_modified=given.last_modified,
    )


def content_from_sdk(block: sdk.ContentBlock) -> McpContent:
    """glove_mcp's content block for one of the SDK's."""
    notes = _annotations(block.annotations)
    if isinstance(block, sdk.TextContent):
        return McpTextContent(text=block.text, annotations=notes)
    if isinstance(block, sdk.ImageContent):
        return McpImageContent(data=block.data, mime_type=block.mime_type, annotations=notes)
    if isinstance(block, sdk.AudioContent):
        return McpAudioContent(data=block.data, mime_type=block.mime_type, annotations=notes)
    if isinstance(block, sdk.ResourceLink):
        return McpResourceLink(
            uri=str(block.uri),
            name=block.name,
            title=block.title,
            description=block.description,
            mime_type=block.mime_type,
            size=block.size,
            annotations=notes,
        )
    resource = block.resource
    return McpEmbeddedResource(
        resource=McpResourceContents(
            uri=str(resource.uri),
            mime_type=resource.mime_type,
            text=resource.text if isinstance(resource, sdk.TextResourceContents) else None,
            blob=resource.blob if isinstance(resource, sdk.BlobResourceContents) else None,
        ),
        annotations=notes,
    )


def call_result_from_sdk(result: sdk.CallToolResult) -> McpCallResult:
    """glove_mcp's ``McpCallResult`` for the SDK's ``CallToolResult``."""
    return McpCallResult(
        content=tuple(content_from_sdk(block) for block in result.content),
        structured_content=result.structured_content,
        is_error=result.is_error,
    )
