"""Bridging: one MCP server tool becomes one ordinary glove_core ``Tool``.

Names are ``<namespace>__<tool>`` (``MCP_NAMESPACE_SEP``), made valid for every model provider:
only ``[A-Za-z0-9_-]`` and at most 64 characters. A name that had to be sanitised or shortened
gets a short hash of the original, so two different server names never collide, and the
bridged tool always calls the server by its real name.

Results: ``structured_content`` when the server sent it, else the text blocks joined by newlines.
Images go to the model as ``ImagePart`` in ``ToolResultData.content``. Audio has no content part
in glove_core, so the model sees a text placeholder ``[audio: <mime>, <n> bytes]``; the bytes
stay in ``render_data`` (the full content list in MCP's JSON shape, empty fields left out) for
the application's UI. A result
over ``max_result_chars`` is cut, with a notice saying how much was cut.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from glove_core import ImagePart, Tool, ToolContext, ToolResultData
from glove_mcp.connect import McpServerConnection
from glove_mcp.errors import GloveMcpError, McpAuthExpiredError
from glove_mcp.events import McpProgress
from glove_mcp.types import (
    McpAudioContent,
    McpCallResult,
    McpContent,
    McpEmbeddedResource,
    McpImageContent,
    McpResourceLink,
    McpTextContent,
    McpTool,
)

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "MAX_TOOL_NAME_LENGTH",
    "MCP_NAMESPACE_SEP",
    "bridge_mcp_tool",
    "bridged_tool_name",
    "convert_call_result",
    "json_schema_to_shape",
]

MCP_NAMESPACE_SEP = "__"
"""Separates the server id from the tool name: ``notion__search``."""

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name every provider accepts."""

DEFAULT_MAX_RESULT_CHARS = 100_000
"""Results longer than this (as the model sees them) are cut with a notice."""

_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LEN = 8
_SHAPE_LIMIT = 600


def bridged_tool_name(namespace: str, tool_name: str) -> str:
    """The model-facing name of server tool ``tool_name`` of server ``namespace``.

    ``namespace__tool`` when that is already valid; otherwise invalid characters become ``_``,
    the name is cut to fit 64 characters, and ``_`` plus 8 hex digits of the original's SHA-256
    are appended, so distinct originals keep distinct names.
    """
    full = f"{namespace}{MCP_NAMESPACE_SEP}{tool_name}"
    clean = _INVALID.sub("_", full)
    if clean == full and 0 < len(full) <= MAX_TOOL_NAME_LENGTH:
        return full
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:_HASH_LEN]
    return f"{clean[: MAX_TOOL_NAME_LENGTH - _HASH_LEN - 1]}_{digest}"


# -- schema shapes -----------------------------------------------------------------------------


def json_schema_to_shape(schema: dict[str, Any]) -> str:
    """A compact, human-readable shape of a JSON Schema, e.g.
    ``{id: string, tags?: [string], state: "open" | "done"}``.

    Properties not listed in ``required`` get ``?``; ``$ref`` shows the referenced name;
    unions use ``|``. Long shapes are cut with ``…``.
    """
    defs = schema.get("$defs") or schema.get("definitions") or {}
    shape = _shape(schema, defs, depth=0, seen=frozenset())
    if len(shape) > _SHAPE_LIMIT:
        shape = shape[: _SHAPE_LIMIT - 1] + "…"
    return shape


def _shape(node: Any, defs: dict[str, Any], depth: int, seen: frozenset[str]) -> str:
    if not isinstance(node, dict):
        return "any"
    if depth > 6:
        return "…"
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        target = defs.get(name)
        if target is None or name in seen:
            return name
        return _shape(target, defs, depth + 1, seen | {name})
    if "const" in node:
        return json.dumps(node["const"])
    if isinstance(node.get("enum"), list):
        return " | ".join(json.dumps(v) for v in node["enum"]) or "never"
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and options:
            return " | ".join(_shape(o, defs, depth + 1, seen) for o in options)
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(_shape({**node, "type": k}, defs, depth, seen) for k in kind)
    if kind == "array" or "items" in node:
        return f"[{_shape(node.get('items', {}), defs, depth + 1, seen)}]"
    props = node.get("properties")
    if kind == "object" or isinstance(props, dict):
        if not isinstance(props, dict) or not props:
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return f"{{[key: string]: {_shape(extra, defs, depth + 1, seen)}}}"
            return "object"
        required = set(node.get("required") or ())
        fields = ", ".join(
            f"{name}{'' if name in required else '?'}: {_shape(sub, defs, depth + 1, seen)}"
            for name, sub in props.items()
        )
        return f"{{{fields}}}"
    if isinstance(kind, str):
        return kind
    return "any"


# -- results -----------------------------------------------------------------------------------


def _text_of(block: McpContent) -> str | None:
    if isinstance(block, McpTextContent):
        return block.text
    if isinstance(block, McpAudioContent):
        size = len(base64.b64decode(block.data, validate=False)) if block.data else 0
        return f"[audio: {block.mime_type}, {size} bytes; not shown to the model]"
    if isinstance(block, McpEmbeddedResource):
        resource = block.resource
        if resource.text is not None:
            return resource.text
        return f"[resource {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(block, McpResourceLink):
        return f"[resource link {block.uri}: {block.name}]"
    return None


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    notice = (
        f"\n[… result cut: showing {limit:,} of {len(text):,} characters "
        f"({len(text) - limit:,} cut). Ask for less, e.g. a narrower query or a page.]"
    )
    return text[:limit] + notice


def convert_call_result(
    namespace: str,
    tool_name: str,
    result: McpCallResult,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
) -> ToolResultData:
    """Turn an ``McpCallResult`` into a ``ToolResultData`` (see the module docstring)."""
    render = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content
    ]
    texts = [t for block in result.content if (t := _text_of(block)) is not None]
    images = [
        ImagePart(media_type=block.mime_type, data=block.data)
        for block in result.content
        if isinstance(block, McpImageContent)
    ]
    joined = "\n".join(texts)
    if result.is_error:
        detail = _cut(joined, max_result_chars) or "(the server gave no message)"
        return ToolResultData(
            status="error",
            message=f"tool {tool_name!r} of MCP server {namespace!r} failed: {detail}",
            render_data=render,
        )
    data: Any
    if result.structured_content is not None:
        data = result.structured_content
        encoded = json.dumps(data, ensure_ascii=False, default=str)
        if len(encoded) > max_result_chars:
            data = _cut(encoded, max_result_chars)
    else:
        data = _cut(joined, max_result_chars)
    return ToolResultData(status="success", data=data, render_data=render, content=images or None)


# -- the bridged tool -------------------------------------------------------------------------


def _description(tool: McpTool) -> str:
    text = (tool.description or tool.title or tool.name).strip()
    if tool.output_schema:
        text = f"{text}\n\nReturns: {json_schema_to_shape(dict(tool.output_schema))}"
    return text


def _input_schema(tool: McpTool) -> dict[str, Any]:
    schema = dict(tool.input_schema or {})
    # Providers require an object schema; a server that omits the type still means one.
    schema.setdefault("type", "object")
    if schema["type"] == "object":
        schema.setdefault("properties", {})
    return schema


def bridge_mcp_tool(
    connection: McpServerConnection,
    tool: McpTool,
    server_mode: bool,
    *,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
) -> Tool:
    """Make an MCP server tool an ordinary glove_core ``Tool``.

    Args:
        connection: the server's connection; calls go through it.
        tool: the tool as the server listed it.
        server_mode: headless: the tool never asks permission. Otherwise only tools annotated
            read-only run without asking.
        max_result_chars: results longer than this are cut with a notice.

    Returns:
        A ``Tool`` named ``bridged_tool_name(connection.namespace, tool.name)`` whose
        ``json_schema`` is the server's input schema. Failures never raise out of it: a 401
        that survives a fresh token gives ``status="error", message="auth_expired"``; other
        connection failures give an error result naming the server.
    """
    namespace = connection.namespace
    real_name = tool.name
    read_only = tool.read_only

    async def do(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.glove.publish(
                McpProgress(namespace, real_name, ctx.call_id, done, total, message)
            )

        try:
            result = await connection.call_tool(real_name, input, on_progress=progress)
        except McpAuthExpiredError as exc:
            return ToolResultData(
                status="error",
                message="auth_expired",
                data={"server": namespace, "tool": real_name, "detail": str(exc)},
            )
        except GloveMcpError as exc:
            return ToolResultData(status="error", message=str(exc))
        return convert_call_result(namespace, real_name, result, max_result_chars)

    return Tool(
        name=bridged_tool_name(namespace, real_name),
        description=_description(tool),
        do=do,
        json_schema=_input_schema(tool),
        requires_permission=not server_mode and not read_only,
        parallel_safe=read_only,
    )
