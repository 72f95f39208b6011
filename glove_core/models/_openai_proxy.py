"""Tools that join mid-conversation, for Chat Completions APIs that have no deferred tools.

OpenAI-compatible providers cache prompt prefixes automatically, tools first, so a tool added
to ``tools`` mid-conversation makes the next call read nothing from the cache. Instead the
adapter keeps one fixed stand-in tool, ``glove_call_tool {name, arguments}``, in the list from
the first call of any conversation whose tools may join (``ModelRequest.tools_may_join``):

- the joined tools (``ModelRequest.deferred_tools``) are not sent in ``tools``;
- the tool result that loads them (``ToolResultData.tool_references``) carries their
  definitions as text, at the end of the history, where only the new part is uncached;
- the model calls one through ``glove_call_tool``; the adapter turns that call back into a
  call of the named tool, and a saved call of a joined tool is sent back as the stand-in call
  it was, so the history stays byte-identical.

The trade-off: the model reads a joined tool's schema as text, not as a function definition,
so the provider does not enforce it (the tool runner still validates the input).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from glove_core.models.base import ModelRequest
from glove_core.types import ToolCall, ToolResultData

__all__ = [
    "PROXY_TOOL",
    "PROXY_TOOL_NAME",
    "loaded_text",
    "proxied_call",
    "tool_definitions",
    "unwrap_call",
    "uses_proxy",
]

PROXY_TOOL_NAME = "glove_call_tool"
PROXY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": PROXY_TOOL_NAME,
        "description": (
            "Call a tool that was added to this conversation after it began. Such tools are "
            "listed, with their input schema, in the tool result that added them. Pass the "
            "tool's exact name and its input as `arguments`."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The added tool's name."},
                "arguments": {"type": "object", "description": "The tool's input."},
            },
            "required": ["name", "arguments"],
        },
    },
}


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def tool_definitions(request: ModelRequest) -> list[dict[str, Any]]:
    """The ``tools`` array: the ordinary tools, then the stand-in when tools may join.

    Raises:
        ValueError: a tool of the request is itself named ``glove_call_tool``.
    """
    if uses_proxy(request) and any(t.name == PROXY_TOOL_NAME for t in request.tools):
        raise ValueError(
            f"the tool name {PROXY_TOOL_NAME!r} is reserved by OpenAICompatModel for tools that "
            "join mid-conversation; rename that tool"
        )
    tools = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in request.tools
        if t.name not in request.deferred_tools
    ]
    if uses_proxy(request):
        tools.append(PROXY_TOOL)
    return tools


def uses_proxy(request: ModelRequest) -> bool:
    """Whether ``request`` offers the stand-in (tools may join, or some are deferred): only
    then is a call named ``glove_call_tool`` the stand-in's, to unwrap."""
    return request.tools_may_join or bool(request.deferred_tools)


def loaded_text(request: ModelRequest, result: ToolResultData) -> str:
    """What a result that loads tools adds to its text: each joined tool's definition."""
    specs = {t.name: t for t in request.tools}
    lines: list[str] = []
    for name in dict.fromkeys(result.tool_references or ()):
        spec = specs.get(name)
        if spec is not None and name in request.deferred_tools:
            schema = json.dumps(spec.input_schema, sort_keys=True)
            lines.append(f"- {name}: {spec.description}\n  input schema: {schema}")
    if not lines:
        return ""
    return (
        f"\n\nTools added (call each through {PROXY_TOOL_NAME} with its name and arguments):\n"
        + "\n".join(lines)
    )


def proxied_call(call: ToolCall, deferred: Collection[str]) -> dict[str, Any]:
    """A saved tool call as the Chat Completions ``tool_calls`` entry the model made."""
    if call.name in deferred:
        arguments = json.dumps({"name": call.name, "arguments": call.input})
        return {
            "id": call.id,
            "type": "function",
            "function": {"name": PROXY_TOOL_NAME, "arguments": arguments},
        }
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.input)},
    }


def unwrap_call(call: ToolCall) -> ToolCall:
    """A call of the stand-in as a call of the tool it names. ``arguments`` may come as an
    object or as a JSON text of one (models often encode it twice), or be left out (no
    arguments). A call without a usable name stays a call of the stand-in, which the tool
    runner answers as an unknown tool."""
    if call.name != PROXY_TOOL_NAME:
        return call
    name = call.input.get("name")
    arguments = call.input.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return call
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        return call
    return ToolCall(id=call.id, name=name, input=arguments)
