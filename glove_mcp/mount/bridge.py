r"""Bridging: one MCP server tool becomes one ordinary glove_core ``Tool``.

Names are ``<namespace>__<tool>`` (``MCP_NAMESPACE_SEP``), made valid for every model provider:
only ``[A-Za-z0-9_-]`` and at most 64 characters. A name that had to be sanitised or shortened
gets a short hash of the original, so two different server names never collide, and the
bridged tool always calls the server by its real name. Catalogue ids never contain ``__``,
never end in ``_`` and fit in 40 characters (``McpCatalogueEntry``), so the first ``__`` of a
bridged name always ends the id (``split_bridged_name``): two servers of a mount can never
offer the same name, whatever their tools are called.

Results (``glove_mcp.mount._results``): ``structured_content`` when the server sent it, else the
text blocks joined by newlines; images a model takes as ``ImagePart``\s, other media as
placeholders, everything in ``render_data`` for the application's UI. Every result is bounded
before anything is made of it: text to ``max_result_chars`` (cut with a note saying how much),
media to ``ResultLimits`` (size, count, valid base64; a bad block becomes a note), so the
model, ``render_data`` and the stored history all get the bounded result. Connection failures,
JSON-RPC errors among them, become error results cut to the same ``max_result_chars``. A
resource link says how to read it: with the server's ``<id>__read_resource`` tool
(``bridge_resource_reader``), which a mount offers for every server that declares the
resources capability (``offers_resources``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import logging
import re
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, Field

from glove_core import Tool, ToolContext, ToolResultData
from glove_core.result_limits import ResultLimits, cut_text
from glove_core.untrusted import mark_untrusted
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import McpServerConnection
from glove_mcp.connect.tool_filter import include_tool
from glove_mcp.errors import GloveMcpError, McpAuthExpiredError
from glove_mcp.mount._results import (
    DEFAULT_MAX_RESULT_CHARS,
    MODEL_IMAGE_TYPES,
    check_max_result_chars,
    convert_call_result,
    convert_read_result,
)
from glove_mcp.mount.apps import ServerViews, with_result_fields, with_view
from glove_mcp.subscribers import McpProgress
from glove_mcp.types import McpTool, McpToolAnnotations

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "IDEMPOTENCY_KEY_META",
    "MAX_TOOL_NAME_LENGTH",
    "MCP_NAMESPACE_SEP",
    "MODEL_IMAGE_TYPES",
    "READ_RESOURCE_TOOL",
    "bridge_mcp_tool",
    "bridge_resource_reader",
    "bridged_description",
    "bridged_tool_name",
    "convert_call_result",
    "convert_read_result",
    "description_text",
    "idempotency_key",
    "json_schema_to_shape",
    "offers_resources",
    "resource_reader",
    "serves_resources",
    "split_bridged_name",
    "tool_summary",
    "untrusted_description",
    "untrusted_output",
]

logger = logging.getLogger(__name__)

MCP_NAMESPACE_SEP = "__"
"""Separates the server id from the tool name: ``notion__search``."""

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name every provider accepts."""

READ_RESOURCE_TOOL = "read_resource"
"""The resource reader's name after the namespace: ``notion__read_resource``."""

_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LEN = 8
_SHAPE_LIMIT = 600


IDEMPOTENCY_KEY_META = "io.github.glove/idempotency-key"
"""The ``_meta`` key of every bridged tool call: one key per call of a conversation, the same
on every attempt and in every process (a durable turn resumed elsewhere sends the same), so a
server that keeps keys can refuse to do one call twice. The value is opaque (a digest)."""


def idempotency_key(conversation: str, call_id: str) -> str:
    """The idempotency key of the model's call ``call_id`` in ``conversation``: a digest, so
    the server learns neither id."""
    return hashlib.sha256(f"{conversation}\0{call_id}".encode()).hexdigest()[:32]


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


def split_bridged_name(name: str) -> tuple[str, str] | None:
    """The (namespace, rest) of a bridged name, split at its first ``__``; None when it has
    none. For a catalogue id (see ``McpCatalogueEntry``) the namespace is exactly the id, and
    the rest is the server's tool name when that needed no sanitising (otherwise the mount's
    ``tool_names`` gives the real name)."""
    namespace, sep, rest = name.partition(MCP_NAMESPACE_SEP)
    return (namespace, rest) if sep else None


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


# -- the bridged tool -------------------------------------------------------------------------


def tool_summary(tool: McpTool) -> str:
    """What a server says a tool does: its description, else its title, else its name."""
    return (tool.description or tool.title or tool.name).strip()


def bridged_description(tool: McpTool) -> str:
    """The description the model gets for a bridged tool: the summary, and the shape of what
    it returns when the server gave an output schema."""
    text = tool_summary(tool)
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
    limits: ResultLimits | None = None,
    resource_reader: str | None = None,
    views: ServerViews | None = None,
) -> Tool:
    """Make an MCP server tool an ordinary glove_core ``Tool``.

    Args:
        connection: the server's connection; calls go through it.
        tool: the tool as the server listed it.
        server_mode: headless: the tool never asks permission. Otherwise only tools annotated
            read-only run without asking.
        max_result_chars: the characters of text one result may hold (default 100,000):
            as the model sees it, in ``render_data`` and in an error message; the rest is cut
            with a note saying how much.
        limits: the media bounds of a result (size, count; ``ResultLimits()`` by default).
        resource_reader: the name of the bridged tool that reads this server's resources,
            when one is offered beside it (the mount's ``<id>__read_resource``); resource
            links in results point to it. None: they name no reader.
        views: the server's MCP Apps views, when the mount renders them
            (``glove_mcp.mount.apps``): results then carry ``render_data`` as a dict, and a
            tool with a view carries it. None: no apps.

    Returns:
        A ``Tool`` named ``bridged_tool_name(connection.namespace, tool.name)`` whose
        ``json_schema`` is the server's input schema. Failures never raise out of it: a 401
        that survives a fresh token gives ``status="error", message="auth_expired"``; other
        connection failures give an error result naming the server.
    """
    namespace = connection.namespace
    real_name = tool.name
    read_only = tool.read_only
    check_max_result_chars(max_result_chars)

    async def do(input: dict[str, Any], ctx: ToolContext) -> ToolResultData:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.glove.publish(
                McpProgress(namespace, real_name, ctx.call_id, done, total, message)
            )

        # The same key for the same call on every attempt, in every process: the model's call
        # id, recorded with its reply (a resumed durable turn sends the recorded one).
        glove: Any = getattr(ctx, "glove", None)  # None where a test calls do() bare
        meta = (
            None
            if glove is None
            else {IDEMPOTENCY_KEY_META: idempotency_key(glove.store.identifier, ctx.call_id)}
        )
        try:
            result = await connection.call_tool(real_name, input, on_progress=progress, meta=meta)
        except GloveMcpError as exc:
            return _failure(namespace, real_name, exc, max_result_chars)
        converted = convert_call_result(
            namespace, real_name, result, max_result_chars, reader=resource_reader, limits=limits
        )
        if views is None:
            return converted
        converted = with_result_fields(converted, result)
        if tool.ui_resource_uri is None:
            return converted
        return await with_view(converted, views, tool.ui_resource_uri, tool=name, tool_input=input)

    name = bridged_tool_name(namespace, real_name)
    return Tool(
        name=name,
        description=bridged_description(tool),
        do=do,
        json_schema=_input_schema(tool),
        requires_permission=not server_mode and not read_only,
        parallel_safe=read_only,
        # A durable turn runs a call that was in flight at a crash again only when the server
        # says a second call changes nothing more.
        idempotent=read_only or tool.annotations.idempotent_hint is True,
    )


def _failure(namespace: str, tool_name: str, exc: GloveMcpError, max_chars: int) -> ToolResultData:
    """A connection failure as the model sees it: ``auth_expired`` for a 401 that survived a
    fresh token (an application watches for that message), else the error's own text, cut to
    ``max_chars`` (a JSON-RPC error's message is the server's to choose, of any size)."""
    if isinstance(exc, McpAuthExpiredError):
        return ToolResultData(
            status="error",
            message="auth_expired",
            data={
                "server": namespace,
                "tool": tool_name,
                "detail": cut_text(str(exc), max_chars, "error"),
            },
        )
    return ToolResultData(status="error", message=cut_text(str(exc), max_chars, "error"))


def untrusted_output(tool: Tool, entry: McpCatalogueEntry) -> Tool:
    """Mark a bridged tool's output and description as untrusted: every result's text reaches
    the model in a ``<tool_output source="MCP server '<id>'" note="…">`` envelope, escaped,
    saying it is data from that server, not instructions
    (``glove_core.untrusted.mark_untrusted``); the description is escaped inside a
    ``<tool_description source="MCP server '<id>'">`` envelope.

    Both envelopes are the same for the same text, so they never move the cached prefix; the
    description's costs about 15 tokens per tool. ``mount_mcp`` applies it to every server's
    tools unless ``mark_untrusted=False``.
    """
    source = f"MCP server {entry.id!r}"
    marked = mark_untrusted(tool, source)
    return dataclasses.replace(marked, description=untrusted_description(tool.description, source))


_DESCRIPTION_ENVELOPE = re.compile(
    r'<tool_description source="[^"]*">(?P<text>.*)</tool_description>', re.DOTALL
)


def description_text(description: str) -> str:
    """The server's own words of a bridged description: ``untrusted_description`` undone
    (for what is kept about a tool, e.g. learned tools; never for the model)."""
    found = _DESCRIPTION_ENVELOPE.fullmatch(description)
    return html.unescape(found.group("text")) if found else description


def untrusted_description(text: str, source: str) -> str:
    """``text`` (a tool description from ``source``) escaped inside its envelope."""
    return (
        f'<tool_description source="{html.escape(source)}">'
        f"{html.escape(text, quote=False)}</tool_description>"
    )


# -- the resource reader ----------------------------------------------------------------------


def offers_resources(connection: McpServerConnection) -> bool:
    """Whether the server declared the resources capability on the live session (False while
    the connection is not connected)."""
    return connection.declares("resources")


async def serves_resources(connection: McpServerConnection) -> bool:
    """Whether the server has something to read: it declares resources and ``resources/list``
    or ``resources/templates/list`` answers with at least one entry. Servers built with
    frameworks that declare the capability whatever they hold (FastMCP with tools only), and
    servers that declare it but answer "Method not found", have nothing to read, so no reader
    is offered for them. Any failure to list counts as nothing (logged): the reader is a
    convenience, never a reason to fail a mount."""
    if not offers_resources(connection):
        return False
    for listing in (connection.list_resources, connection.list_resource_templates):
        try:
            if await listing():
                return True
        except GloveMcpError as exc:
            logger.info(
                "MCP server %r declares resources but listing them failed (%s); "
                "no resource reader is offered",
                connection.namespace,
                exc,
            )
            return False
    return False


_READER_DESCRIPTION = (
    "Read a resource of MCP server {namespace!r} by its URI, such as a resource link another "
    "of its tools returned."
)


class _ReadInput(BaseModel):
    uri: str = Field(
        min_length=1,
        description="The resource's URI, e.g. from a resource link in another tool's result.",
    )


def bridge_resource_reader(
    connection: McpServerConnection,
    *,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    limits: ResultLimits | None = None,
) -> Tool:
    """The tool that reads the server's resources: ``<namespace>__read_resource``, input
    ``{uri: string}``, read-only (never asks permission, may run in parallel).

    Offer it for servers where ``offers_resources(connection)`` holds. Text contents reach the
    model as text, images it takes as ``ImagePart``\\s, other blobs as a placeholder
    (``convert_read_result``). Failures never raise out of it: an unknown URI, a server that
    does not offer resources or a connection failure is an error result saying so, and a 401
    that survives a fresh token is ``message="auth_expired"`` like ``bridge_mcp_tool``'s.
    """
    namespace = connection.namespace

    async def do(input: _ReadInput, ctx: ToolContext) -> ToolResultData:
        try:
            result = await connection.read_resource(input.uri)
        except GloveMcpError as exc:
            return _failure(namespace, READ_RESOURCE_TOOL, exc, max_result_chars)
        return convert_read_result(result, max_result_chars, limits=limits)

    return Tool(
        name=bridged_tool_name(namespace, READ_RESOURCE_TOOL),
        description=_READER_DESCRIPTION.format(namespace=namespace),
        do=do,
        input_model=_ReadInput,
        requires_permission=False,
        parallel_safe=True,
        idempotent=True,
    )


def resource_reader(
    connection: McpServerConnection,
    listed: Collection[str],
    *,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    limits: ResultLimits | None = None,
) -> Tool | None:
    """The reader tool to offer for ``connection``'s server, or None: when the server declares
    no resources, lists a tool of its own named ``read_resource`` (the server's tool keeps the
    name), or the connection's ``exclude_tools`` / ``filter_tools`` reject ``read_resource``
    (the filter sees it as a read-only tool of that name, so one filter governs every tool).

    Args:
        connection: the server's connection, connected.
        listed: the real names of the server tools being offered.
    """
    if not offers_resources(connection) or READ_RESOURCE_TOOL in listed:
        return None
    namespace = connection.namespace
    as_listed = McpTool(
        name=READ_RESOURCE_TOOL,
        description=_READER_DESCRIPTION.format(namespace=namespace),
        input_schema=_ReadInput.model_json_schema(),
        annotations=McpToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    if not include_tool(namespace, as_listed, connection.exclude_tools, connection.filter_tools):
        return None
    return bridge_resource_reader(connection, max_result_chars=max_result_chars, limits=limits)
