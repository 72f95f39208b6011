"""The request checks of the real Messages API that an adapter bug would trip.

Each returns the API's style of message (``messages.3.content.0: …``) or None when valid, so a
malformed request fails a test with a 400 exactly where production would.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["validate_messages_request"]

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_RESULT_PARTS = {"text", "image", "document", "search_result", "tool_reference"}
MAX_BREAKPOINTS = 4


def validate_messages_request(body: Any) -> str | None:
    """Return the error message the API would give for ``body``, or None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: Field required (an integer >= 1)"
    problem = _check_tools(body.get("tools"))
    if problem:
        return problem
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    breakpoints = _count_cache_control(body.get("tools")) + _count_cache_control(body.get("system"))
    previous_tool_ids: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{index}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        breakpoints += _count_cache_control(content)
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            return f"messages.{index}: all messages must have non-empty content"
        problem = _check_blocks(index, message["role"], blocks, previous_tool_ids)
        if problem:
            return problem
        previous_tool_ids = [
            b["id"] for b in blocks if message["role"] == "assistant" and b["type"] == "tool_use"
        ]
    if previous_tool_ids:
        return (
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` "
            f"blocks immediately after: {', '.join(previous_tool_ids)}"
        )
    if breakpoints > MAX_BREAKPOINTS:
        return (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {breakpoints}."
        )
    return None


def _check_tools(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not _TOOL_NAME.match(str(tool.get("name", ""))):
            return f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.input_schema.type: Input should be 'object'"
        if tool["name"] in names:
            return f"tools: Tool names must be unique. Duplicate: {tool['name']}"
        names.add(tool["name"])
    return None


def _check_blocks(
    index: int, role: str, blocks: list[Any], expected_results: list[str]
) -> str | None:
    seen_results: list[str] = []
    for j, block in enumerate(blocks):
        where = f"messages.{index}.content.{j}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"{where}: Input should be a valid content block"
        kind = block["type"]
        if kind == "text":
            if not isinstance(block.get("text"), str) or not block["text"].strip():
                return f"{where}: text content blocks must contain non-whitespace text"
        elif kind == "tool_use":
            if role != "assistant":
                return f"{where}: tool_use blocks are only allowed in assistant messages"
            if not isinstance(block.get("input"), dict):
                return f"{where}.input: Input should be a valid dictionary"
        elif kind == "tool_result":
            if role != "user":
                return f"{where}: tool_result blocks are only allowed in user messages"
            call_id = block.get("tool_use_id")
            if call_id not in expected_results:
                return (
                    f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{call_id}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
            if call_id in seen_results:
                return f"{where}: duplicate `tool_result` for tool_use_id {call_id}"
            if any(b.get("type") != "tool_result" for b in blocks[:j]):
                return f"{where}: tool_result blocks must come first in the message content"
            seen_results.append(call_id)
            problem = _check_result_content(where, block.get("content"))
            if problem:
                return problem
        elif kind in ("image", "document"):
            if not isinstance(block.get("source"), dict):
                return f"{where}.source: Field required"
        else:
            return f"{where}.type: unsupported content block type {kind!r}"
    missing = [i for i in expected_results if i not in seen_results]
    if missing:
        return (
            f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}"
        )
    return None


def _check_result_content(where: str, content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"{where}.content: Input should be a valid string or list"
    for k, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in _RESULT_PARTS:
            return (
                f"{where}.content.{k}: Input should be a text, image, document, search_result "
                "or tool_reference block"
            )
        if part["type"] == "text" and not str(part.get("text", "")).strip():
            return f"{where}.content.{k}: text content blocks must contain non-whitespace text"
    return None


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if "cache_control" in value and value["cache_control"] is not None else 0
        return own + sum(_count_cache_control(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0
