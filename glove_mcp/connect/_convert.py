"""The SDK's tool, result, resource and prompt models turned into glove_mcp's
(``glove_mcp.types``).

Called where the SDK hands them over (``McpServerConnection``), so nothing past the connection
sees an ``mcp_types`` object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as sdk

from glove_mcp.types import (
    McpAudioContent,
    McpCallResult,
    McpContent,
    McpContentAnnotations,
    McpEmbeddedResource,
    McpImageContent,
    McpPrompt,
    McpPromptArgument,
    McpPromptMessage,
    McpPromptResult,
    McpReadResult,
    McpResource,
    McpResourceContents,
    McpResourceLink,
    McpResourceTemplate,
    McpTextContent,
    McpTool,
    McpToolAnnotations,
)

__all__ = [
    "call_result_from_sdk",
    "content_from_sdk",
    "prompt_from_sdk",
    "prompt_result_from_sdk",
    "read_result_from_sdk",
    "resource_from_sdk",
    "resource_template_from_sdk",
    "tool_from_sdk",
]

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
        **_ui_fields(tool.meta),
    )


def _ui_fields(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The MCP Apps fields of a tool's ``_meta`` (``ui.resourceUri``, ``ui.visibility``, and
    the deprecated flat ``ui/resourceUri``); what is malformed is left out."""
    if not isinstance(meta, Mapping):
        return {}
    ui = meta.get("ui")
    ui = ui if isinstance(ui, Mapping) else {}
    uri = ui.get("resourceUri", meta.get("ui/resourceUri"))
    found: dict[str, Any] = {}
    if isinstance(uri, str) and uri.startswith("ui://"):
        found["ui_resource_uri"] = uri
    visibility = ui.get("visibility")
    if isinstance(visibility, list) and all(isinstance(v, str) for v in visibility):
        found["ui_visibility"] = tuple(visibility)
    return found


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
    return McpEmbeddedResource(resource=_contents(block.resource), annotations=notes)


def _contents(given: sdk.TextResourceContents | sdk.BlobResourceContents) -> McpResourceContents:
    return McpResourceContents(
        uri=str(given.uri),
        mime_type=given.mime_type,
        text=given.text if isinstance(given, sdk.TextResourceContents) else None,
        blob=given.blob if isinstance(given, sdk.BlobResourceContents) else None,
    )


def call_result_from_sdk(result: sdk.CallToolResult) -> McpCallResult:
    """glove_mcp's ``McpCallResult`` for the SDK's ``CallToolResult``."""
    return McpCallResult(
        content=tuple(content_from_sdk(block) for block in result.content),
        structured_content=result.structured_content,
        is_error=result.is_error,
    )


def resource_from_sdk(resource: sdk.Resource) -> McpResource:
    """glove_mcp's ``McpResource`` for a resource the SDK listed."""
    return McpResource(
        uri=str(resource.uri),
        name=resource.name,
        title=resource.title,
        description=resource.description,
        mime_type=resource.mime_type,
        size=resource.size,
        annotations=_annotations(resource.annotations),
    )


def resource_template_from_sdk(template: sdk.ResourceTemplate) -> McpResourceTemplate:
    """glove_mcp's ``McpResourceTemplate`` for a template the SDK listed."""
    return McpResourceTemplate(
        uri_template=template.uri_template,
        name=template.name,
        title=template.title,
        description=template.description,
        mime_type=template.mime_type,
    )


def read_result_from_sdk(result: sdk.ReadResourceResult) -> McpReadResult:
    """glove_mcp's ``McpReadResult`` for the SDK's ``ReadResourceResult``."""
    return McpReadResult(contents=tuple(_contents(c) for c in result.contents))


def prompt_from_sdk(prompt: sdk.Prompt) -> McpPrompt:
    """glove_mcp's ``McpPrompt`` for a prompt the SDK listed."""
    return McpPrompt(
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=tuple(
            McpPromptArgument(name=a.name, description=a.description, required=bool(a.required))
            for a in prompt.arguments or ()
        ),
    )


def prompt_result_from_sdk(result: sdk.GetPromptResult) -> McpPromptResult:
    """glove_mcp's ``McpPromptResult`` for the SDK's ``GetPromptResult``."""
    return McpPromptResult(
        description=result.description,
        messages=tuple(
            McpPromptMessage(role=m.role, content=content_from_sdk(m.content))
            for m in result.messages
        ),
    )
