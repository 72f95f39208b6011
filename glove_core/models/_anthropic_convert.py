"""Conversion between glove messages and Anthropic Messages API blocks, with cache breakpoints.

The output is always a request the API accepts: consecutive same-role messages are merged
(media kept), every ``tool_use`` is answered in the next user turn (a placeholder when no result
was recorded), duplicate results are dropped, results that answer no call of the previous turn
become text, and ``tool_result`` blocks come first in their turn.
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass, field
from typing import Any

from glove_core.models._anthropic_tools import (
    ReferenceBlocks,
    effective_deferred,
    reference_blocks,
    tool_blocks,
)
from glove_core.models.base import ModelRequest
from glove_core.result_limits import data_text
from glove_core.types import (
    ContentPart,
    DocumentPart,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultData,
)

__all__ = [
    "PLACEHOLDER_RESULT",
    "AnthropicParams",
    "build_params",
    "convert_messages",
    "message_from_blocks",
    "result_text",
]

logger = logging.getLogger(__name__)

PLACEHOLDER_RESULT = (
    "interrupted: no result was recorded for this tool call (the process stopped before it "
    "finished); its outcome is unknown"
)

Block = dict[str, Any]
MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
"""How far back from a breakpoint the API looks for an earlier cache entry, in blocks."""


@dataclass
class AnthropicParams:
    """The parts of one Messages API request that come from a ModelRequest."""

    system: list[Block]
    tools: list[Block]
    messages: list[dict[str, Any]]
    breakpoints: list[str] = field(default_factory=list)
    """Where ``cache_control`` went: ``tools.N``, ``system.N``, ``messages.N.content.M``."""
    saved_position: int | None = None
    """Index, over all message blocks, of the breakpoint on the last saved block."""


def result_text(result: ToolResultData) -> str:
    """The text the model reads for a tool result. Never the string "null"; never
    ``render_data``."""
    data = None if result.data is None else data_text(result.data)
    if result.status == "success":
        if data:
            return data
        if result.message:
            return result.message
        return "" if result.content else "(the tool returned no output)"
    if result.status == "aborted":
        reason = result.message or data or "it was aborted before it finished"
        return f"The tool call was aborted: {reason}"
    text = result.message or "the tool failed without saying why"
    if data and data != result.message:
        text = f"{text}\n{data}"
    return f"Error: {text}"


def _part_block(part: ContentPart) -> Block | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text.strip() else None
    if isinstance(part, ImagePart):
        if part.data is not None:
            source: Block = {"type": "base64", "media_type": part.media_type, "data": part.data}
        elif part.url is not None:
            source = {"type": "url", "url": part.url}
        else:
            return None
        return {"type": "image", "source": source}
    return _document_block(part)


def _document_block(part: DocumentPart) -> Block | None:
    if part.url is not None and part.data is None:
        source: Block = {"type": "url", "url": part.url}
    elif part.data is None:
        return None
    elif part.media_type == "application/pdf":
        source = {"type": "base64", "media_type": part.media_type, "data": part.data}
    else:
        # The API takes base64 only for PDFs; other documents travel as plain text.
        try:
            text = base64.b64decode(part.data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            text = part.data
        source = {"type": "text", "media_type": "text/plain", "data": text}
    block: Block = {"type": "document", "source": source}
    if part.title:
        block["title"] = part.title
    return block


def _content_blocks(message: Message) -> list[Block]:
    blocks: list[Block] = []
    parts = message.content or []
    part_text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    if message.text.strip() and message.text != part_text:
        blocks.append({"type": "text", "text": message.text})
    for part in parts:
        if message.sender == "agent" and not isinstance(part, TextPart):
            logger.debug("dropped a %s part of an agent message: the API refuses it", part.type)
            continue
        block = _part_block(part)
        if block is not None:
            blocks.append(block)
    return blocks


def _result_block(result: ToolResult, references: ReferenceBlocks | None) -> Block:
    content: list[Block] = []
    text = result_text(result.result)
    if text.strip():
        content.append({"type": "text", "text": text})
    for part in result.result.content or []:
        media = _part_block(part)
        if media is not None:
            content.append(media)
    if references is not None and result.result.tool_references:
        content.extend(references(result.result))
    if not content:
        content.append({"type": "text", "text": "(the tool returned no output)"})
    block: Block = {"type": "tool_result", "tool_use_id": result.call_id, "content": content}
    if result.result.status != "success":
        block["is_error"] = True
    return block


def _placeholder(call_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": [{"type": "text", "text": PLACEHOLDER_RESULT}],
        "is_error": True,
    }


def _add_results(turn: list[Block], results: list[Block]) -> None:
    # tool_result blocks must lead their turn; keep their relative order.
    at = 0
    while at < len(turn) and turn[at]["type"] == "tool_result":
        at += 1
    turn[at:at] = results


def convert_messages(
    messages: list[Message], references: ReferenceBlocks | None = None
) -> tuple[list[dict[str, Any]], list[Block | None]]:
    """Convert glove messages to API messages; ``references`` renders the tools a result
    references (None: they are left out).

    Returns:
        The API messages, and for each glove message the last block it produced (None when it
        produced none), so breakpoints can be placed on blocks.
    """
    turns: list[dict[str, Any]] = []
    last_block: list[Block | None] = []
    open_ids: list[str] = []
    answered: set[str] = set()
    for message in messages:
        role = "assistant" if message.sender == "agent" else "user"
        if role == "assistant":
            blocks = _content_blocks(message)
            blocks.extend(_tool_use_block(c) for c in message.tool_calls or [])
            results: list[Block] = []
        else:
            results, orphans = _user_results(
                message.tool_results or [], open_ids, answered, references
            )
            blocks = orphans + _content_blocks(message)
        if not results and not blocks:
            last_block.append(None)
            continue
        if turns and turns[-1]["role"] == role:
            turn = turns[-1]["content"]
        else:
            turn = []
            if role == "assistant":
                open_ids = []
            turns.append({"role": role, "content": turn})
        if role == "assistant":
            open_ids.extend(c.id for c in message.tool_calls or [])
        _add_results(turn, results)
        turn.extend(blocks)
        produced = results + blocks
        last_block.append(produced[-1] if produced else None)
    _repair_unanswered(turns)
    return turns, last_block


def _tool_use_block(call: ToolCall) -> Block:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.input)}


def _user_results(
    results: list[ToolResult],
    open_ids: list[str],
    answered: set[str],
    references: ReferenceBlocks | None,
) -> tuple[list[Block], list[Block]]:
    blocks: list[Block] = []
    orphans: list[Block] = []
    for result in results:
        if result.call_id in answered:
            logger.debug("dropped a duplicate result for tool call %s", result.call_id)
            continue
        answered.add(result.call_id)
        if result.call_id in open_ids:
            blocks.append(_result_block(result, references))
        else:
            # No call of the previous turn matches (e.g. history cut by a compaction): the API
            # would refuse a tool_result, but the model may still need what it says.
            text = result_text(result.result)
            orphans.append(
                {
                    "type": "text",
                    "text": f"[result of tool {result.name} ({result.call_id})] {text}",
                }
            )
    return blocks, orphans


def _repair_unanswered(turns: list[dict[str, Any]]) -> None:
    index = 0
    while index < len(turns):
        turn = turns[index]
        if turn["role"] == "assistant":
            ids = [b["id"] for b in turn["content"] if b["type"] == "tool_use"]
            if ids:
                if index + 1 >= len(turns) or turns[index + 1]["role"] != "user":
                    turns.insert(index + 1, {"role": "user", "content": []})
                nxt = turns[index + 1]["content"]
                have = {b["tool_use_id"] for b in nxt if b["type"] == "tool_result"}
                missing = [_placeholder(i) for i in ids if i not in have]
                if missing:
                    logger.warning(
                        "answered %d tool call(s) that had no recorded result with a placeholder",
                        len(missing),
                    )
                    _add_results(nxt, missing)
        index += 1


def build_params(
    request: ModelRequest, ttl: str | None, anchor: int | None = None
) -> AnthropicParams:
    """Build system, tools and messages for ``request``; ``ttl`` None means no caching.

    Breakpoints (at most four): the last ordinary tool (deferred tools come after it and are
    not part of the cached prefix), the system prompt, the block just before the request-frozen
    context, and the last block of the saved messages — never a transient one.

    ``anchor`` is where the previous call of the conversation put its last-saved breakpoint
    (an index over all message blocks). The API looks for earlier entries only 20 blocks back
    from each breakpoint, so when more blocks than that were added since (a reply with many
    parallel tool calls) and a breakpoint is left over, one goes on the anchor itself.
    """
    control = {"type": "ephemeral", "ttl": ttl} if ttl is not None else None
    deferred = effective_deferred(request)
    tools, ordinary = tool_blocks(request, deferred)
    system: list[Block] = [{"type": "text", "text": request.system}] if request.system else []
    messages, last_block = convert_messages(request.messages, reference_blocks(deferred))
    params = AnthropicParams(system=system, tools=tools, messages=messages)
    if control is None:
        return params
    if ordinary:
        tools[ordinary - 1]["cache_control"] = dict(control)
    if system:
        system[-1]["cache_control"] = dict(control)
    marks: list[int] = []
    if request.request_context_index is not None and request.request_context_index > 0:
        marks.append(request.request_context_index - 1)
    if request.saved_count > 0:
        marks.append(min(request.saved_count, len(request.messages)) - 1)
    marked: list[Block] = []
    for mark in marks:
        block = next((b for b in reversed(last_block[: mark + 1]) if b is not None), None)
        if block is not None and all(block is not m for m in marked):
            block["cache_control"] = dict(control)
            marked.append(block)
    flat = [b for m in messages for b in m["content"]]
    position = {id(b): i for i, b in enumerate(flat)}
    marked_at = sorted(position[id(b)] for b in marked)
    if marked_at:
        params.saved_position = marked_at[-1]
    used = len(marked) + (1 if ordinary else 0) + (1 if system else 0)
    if (
        anchor is not None
        and params.saved_position is not None
        and used < MAX_BREAKPOINTS
        and 0 <= anchor < params.saved_position
        and not any(anchor <= p < anchor + LOOKBACK_BLOCKS for p in marked_at)
    ):
        flat[anchor]["cache_control"] = dict(control)
    params.breakpoints = _breakpoint_paths(params)
    return params


def _breakpoint_paths(params: AnthropicParams) -> list[str]:
    paths = [f"tools.{i}" for i, t in enumerate(params.tools) if "cache_control" in t]
    paths += [f"system.{i}" for i, b in enumerate(params.system) if "cache_control" in b]
    for i, message in enumerate(params.messages):
        paths += [
            f"messages.{i}.content.{j}"
            for j, b in enumerate(message["content"])
            if "cache_control" in b
        ]
    return paths


def message_from_blocks(blocks: list[Any]) -> Message:
    """The agent Message for the content blocks of an API reply (SDK models or dicts)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in blocks:
        data = block if isinstance(block, dict) else block.model_dump()
        if data.get("type") == "text":
            texts.append(data.get("text") or "")
        elif data.get("type") == "tool_use":
            raw_input = data.get("input")
            calls.append(
                ToolCall(
                    id=data["id"],
                    name=data["name"],
                    input=raw_input if isinstance(raw_input, dict) else {},
                )
            )
    return Message(sender="agent", text="".join(texts), tool_calls=calls or None)
