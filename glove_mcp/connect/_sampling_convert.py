"""Conversion between an MCP sampling request and a glove ``ModelRequest``, and back.

Used by ``glove_mcp.connect.sampling`` only. MCP messages become glove ``Message``s: text and
images as they are, audio (which no adapter sends) as placeholder text, ``tool_use`` /
``tool_result`` blocks (SEP-1577) as tool calls and results. Tool names are made safe for providers
that accept only ``[A-Za-z0-9_-]{1,64}`` (MCP also allows dots and longer names) and mapped back in
the reply.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

import mcp_types as types

from glove_core import ImagePart, Message, TextPart, ToolCall, ToolResult, ToolResultData
from glove_core.tools import ToolSpec
from glove_core.types import ContentPart

__all__ = [
    "ToolNames",
    "approval_messages",
    "reply_blocks",
    "stop_reason",
    "to_messages",
    "tool_specs",
]

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64
# Provider stop reasons (Anthropic, OpenAI-compatible, ScriptedModel) in MCP's words.
_STOP_REASONS = {
    "max_tokens": "maxTokens",
    "length": "maxTokens",
    "stop_sequence": "stopSequence",
    "tool_use": "toolUse",
    "tool_calls": "toolUse",
}


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name)[:_MAX_NAME] or "tool"


class ToolNames:
    """The server's tool names and the names the model sees, both ways."""

    def __init__(self, tools: Sequence[types.Tool]) -> None:
        self._to_model: dict[str, str] = {}
        self._to_server: dict[str, str] = {}
        for tool in tools:
            name = _safe(tool.name)
            number = 2
            while name in self._to_server:
                suffix = f"_{number}"
                name = _safe(tool.name)[: _MAX_NAME - len(suffix)] + suffix
                number += 1
            self._to_model[tool.name] = name
            self._to_server[name] = tool.name

    def to_model(self, server_name: str) -> str:
        """The name the model sees for a server tool (also for names not in the tool list)."""
        return self._to_model.get(server_name) or _safe(server_name)

    def to_server(self, model_name: str) -> str:
        """The server's name for a tool the model called."""
        return self._to_server.get(model_name, model_name)


def tool_specs(tools: Sequence[types.Tool], names: ToolNames) -> list[ToolSpec]:
    """The server's sampling tools as the model sees them."""
    return [
        ToolSpec(names.to_model(t.name), t.description or t.title or "", dict(t.input_schema))
        for t in tools
    ]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _placeholder(kind: str, mime_type: str) -> str:
    return f"[{kind} ({mime_type}) left out: the model cannot take {kind}]"


def _result_content(block: types.ContentBlock) -> tuple[str | None, ImagePart | None]:
    if isinstance(block, types.TextContent):
        return block.text, None
    if isinstance(block, types.ImageContent):
        return None, ImagePart(media_type=block.mime_type, data=block.data)
    if isinstance(block, types.AudioContent):
        return _placeholder("audio", block.mime_type), None
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}]", None
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return resource.text, None
    return f"[binary resource {resource.uri} ({resource.mime_type or 'unknown type'})]", None


def _tool_result(block: types.ToolResultContent, name: str) -> ToolResult:
    texts: list[str] = []
    media: list[ContentPart] = []
    for item in block.content:
        text, image = _result_content(item)
        if text is not None:
            texts.append(text)
        if image is not None:
            media.append(image)
    if not texts and block.structured_content is not None:
        texts.append(_json(block.structured_content))
    text = "\n".join(texts) or None
    if block.is_error:
        data = ToolResultData(status="error", message=text, content=media or None)
    else:
        data = ToolResultData(data=text, content=media or None)
    return ToolResult(call_id=block.tool_use_id, name=name, result=data)


def _tool_text(
    block: types.ToolUseContent | types.ToolResultContent, called: dict[str, str]
) -> str:
    if isinstance(block, types.ToolUseContent):
        return f"[called tool {block.name} ({block.id}) with {_json(block.input)}]"
    result = _tool_result(block, called.get(block.tool_use_id, "tool")).result
    outcome = "error" if result.status == "error" else "result"
    body = result.message if result.status == "error" else result.data
    return f"[{outcome} of tool call {block.tool_use_id}] {body or '(no output)'}"


def to_messages(
    messages: Sequence[types.SamplingMessage], names: ToolNames, *, tools_as_text: bool
) -> list[Message]:
    """The server's messages as glove messages.

    Args:
        messages: the request's messages.
        names: the tool-name mapping.
        tools_as_text: write ``tool_use`` / ``tool_result`` blocks as text (when no tools are
            offered to the model, a provider refuses tool blocks in the history).
    """
    out: list[Message] = []
    called: dict[str, str] = {}
    for message in messages:
        agent = message.role == "assistant"
        parts: list[ContentPart] = []
        calls: list[ToolCall] = []
        results: list[ToolResult] = []
        for block in message.content_as_list:
            if isinstance(block, types.TextContent):
                parts.append(TextPart(text=block.text))
            elif isinstance(block, types.ImageContent):
                if agent:
                    # Providers take images from the user side only.
                    parts.append(TextPart(text=f"[an image ({block.mime_type}) was shown here]"))
                else:
                    parts.append(ImagePart(media_type=block.mime_type, data=block.data))
            elif isinstance(block, types.AudioContent):
                parts.append(TextPart(text=_placeholder("audio", block.mime_type)))
            elif isinstance(block, types.ToolUseContent) and agent and not tools_as_text:
                called[block.id] = block.name
                calls.append(
                    ToolCall(id=block.id, name=names.to_model(block.name), input=block.input)
                )
            elif isinstance(block, types.ToolResultContent) and not agent and not tools_as_text:
                name = names.to_model(called.get(block.tool_use_id, "tool"))
                results.append(_tool_result(block, name))
            else:
                if isinstance(block, types.ToolUseContent):
                    called[block.id] = block.name
                parts.append(TextPart(text=_tool_text(block, called)))
        text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
        has_media = any(not isinstance(p, TextPart) for p in parts)
        out.append(
            Message(
                sender="agent" if agent else "user",
                text=text,
                content=parts if has_media else None,
                tool_calls=calls or None,
                tool_results=results or None,
            )
        )
    return out


def approval_messages(messages: Sequence[types.SamplingMessage]) -> list[dict[str, str]]:
    """The request's messages as plain ``{"role", "text"}`` dicts for a person to read."""
    out: list[dict[str, str]] = []
    called: dict[str, str] = {}
    for message in messages:
        lines: list[str] = []
        for block in message.content_as_list:
            if isinstance(block, types.TextContent):
                lines.append(block.text)
            elif isinstance(block, types.ImageContent | types.AudioContent):
                lines.append(f"[{block.type} ({block.mime_type})]")
            else:
                if isinstance(block, types.ToolUseContent):
                    called[block.id] = block.name
                lines.append(_tool_text(block, called))
        out.append({"role": message.role, "text": "\n".join(lines)})
    return out


def reply_blocks(
    message: Message, names: ToolNames
) -> list[types.TextContent | types.ToolUseContent]:
    """The model's reply as MCP content: its text, then its tool calls."""
    blocks: list[types.TextContent | types.ToolUseContent] = []
    if message.text or not message.tool_calls:
        blocks.append(types.TextContent(text=message.text))
    blocks.extend(
        types.ToolUseContent(id=c.id, name=names.to_server(c.name), input=dict(c.input))
        for c in message.tool_calls or []
    )
    return blocks


def stop_reason(provider_reason: str | None, called_tools: bool) -> str:
    """MCP's stop reason for a reply (``endTurn`` unless the provider said otherwise)."""
    if called_tools:
        return "toolUse"
    reason = _STOP_REASONS.get(provider_reason or "", "endTurn")
    # A reply without tool calls did not stop to use a tool, whatever the provider said.
    return "endTurn" if reason == "toolUse" else reason
