"""The last-line bound on what any tool returns, applied before a result is saved or shown.

Every tool result passes through ``bound_result`` in the tool runner, whatever made it (a
folded tool, an MCP bridge, a subagent), so no tool can put more into the stored history than
``ResultLimits`` allows, nor media a provider would refuse (a request that replays refused
media fails on every later turn, so the conversation would stay broken):

- ``data``, ``message`` and ``summary`` are each cut to ``max_text_chars`` (``data`` measured
  as the JSON text the model reads), with a note saying how much was cut;
- ``render_data`` larger than ``max_render_chars`` (as JSON) is replaced by a note: a UI can't
  show half a structure, so none of it is kept;
- media parts (``content``) must have a type the shipped model adapters send (``IMAGE_TYPES``,
  ``DOCUMENT_TYPES``), valid base64, at most ``max_media_bytes`` decoded, at most
  ``max_media_parts`` per result; a part that fails is replaced by a text note in its place,
  never dropped silently.

Sizes are measured without serialising the whole value (``json_size``), so a huge result costs
no second copy just to find out it is too big.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from glove_core.types import ContentPart, DocumentPart, ImagePart, TextPart, ToolResultData

__all__ = [
    "DOCUMENT_TYPES",
    "IMAGE_TYPES",
    "ResultLimits",
    "bound_result",
    "check_media",
    "cut_text",
    "data_text",
    "decoded_size",
    "json_size",
    "media_problem",
]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image types every shipped model adapter sends and providers accept."""

DOCUMENT_TYPES = frozenset({"application/pdf", "text/*"})
"""Document types the shipped adapters send: PDFs as base64, any ``text/*`` in UTF-8 as its
text."""

_BASE64 = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_MAX_URL_CHARS = 8_192


@dataclass(frozen=True)
class ResultLimits:
    """How much one tool result may hold (``Glove(result_limits=...)``).

    The defaults are generous on purpose: they stop a runaway tool from filling the store and
    the model's context, not ordinary results. MCP tools are bounded tighter by their bridge
    (``mount_mcp(max_result_chars=...)``).
    """

    max_text_chars: int = 1_000_000
    """Characters of ``data`` (as the JSON text the model reads), of ``message`` and of
    ``summary``, each (default 1,000,000, about 250,000 tokens)."""
    max_render_chars: int = 2_000_000
    """Characters of ``render_data`` as JSON (default 2,000,000); a larger one is replaced
    by a note."""
    max_media_bytes: int = 5 * 1024 * 1024
    """Decoded bytes of one media part (default 5 MiB, the largest image providers take)."""
    max_media_parts: int = 20
    """Media parts per result (default 20); later ones are replaced by one note."""

    def __post_init__(self) -> None:
        for name in ("max_text_chars", "max_render_chars", "max_media_bytes", "max_media_parts"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(
                    f"ResultLimits.{name} must be a whole number of at least 1, got {value!r}"
                )


def cut_text(text: str, limit: int, what: str = "result") -> str:
    """``text`` if it fits ``limit`` characters, else its first ``limit`` characters and a
    note saying how many were cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + (
        f"\n[… {what} cut: showing {limit:,} of {len(text):,} characters "
        f"({len(text) - limit:,} cut). Ask for less, e.g. a narrower query or a page.]"
    )


def json_size(value: Any, limit: int) -> int:
    """About how many characters ``value`` takes as JSON, counting no further than just past
    ``limit`` (so a huge value is not walked, nor copied, to the end)."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + 2 * len(item)
            for key, inner in item.items():
                total += len(str(key)) + 2
                stack.append(inner)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        elif item is None or isinstance(item, bool | int | float):
            total += len(str(item))
        elif hasattr(item, "model_dump"):
            stack.append(item.model_dump(mode="json"))
        else:
            total += len(str(item))
    return total


def decoded_size(data: str) -> int | None:
    """The decoded size of base64 ``data``, or None when it is not valid (padded, unwrapped)
    base64."""
    raw = data.encode("ascii", "replace")
    if len(raw) % 4 or _BASE64.fullmatch(raw) is None:
        return None
    return len(raw) // 4 * 3 - raw[-2:].count(b"=")


def media_problem(part: ImagePart | DocumentPart, limits: ResultLimits) -> str | None:
    """Why a provider would refuse ``part`` (type, base64, size), or None when it is fine."""
    allowed = IMAGE_TYPES if isinstance(part, ImagePart) else DOCUMENT_TYPES
    kind = part.media_type
    if kind not in allowed and not (isinstance(part, DocumentPart) and kind.startswith("text/")):
        return f"type {part.media_type!r} is not one models take ({', '.join(sorted(allowed))})"
    if part.data is None:
        url = part.url or ""
        if not url.startswith(("https://", "http://")) or len(url) > _MAX_URL_CHARS:
            return "it has neither base64 data nor an http(s) URL"
        return None
    if len(part.data) > (limits.max_media_bytes + 2) // 3 * 4 + 4:
        return f"it is larger than {limits.max_media_bytes:,} bytes"
    size = decoded_size(part.data)
    if size is None:
        return "its data is not valid base64"
    if size > limits.max_media_bytes:
        return f"it is {size:,} bytes, over the limit of {limits.max_media_bytes:,}"
    if size == 0:
        return "it is empty"
    if isinstance(part, DocumentPart) and part.media_type != "application/pdf":
        try:
            base64.b64decode(part.data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return "its text is not UTF-8"
    return None


def check_media(parts: list[ContentPart], limits: ResultLimits) -> tuple[list[ContentPart], bool]:
    """Media parts a provider will take, each bad one replaced by a text note in its place,
    and those past ``limits.max_media_parts`` by one note at the end.

    Returns:
        The parts to keep, and whether any was replaced.
    """
    kept: list[ContentPart] = []
    media = 0
    over = 0
    for part in parts:
        if isinstance(part, TextPart):
            kept.append(part)
            continue
        if media >= limits.max_media_parts:
            over += 1
            continue
        problem = media_problem(part, limits)
        if problem is None:
            media += 1
            kept.append(part)
        else:
            kept.append(TextPart(text=f"[{part.type} ({part.media_type}) not shown: {problem}]"))
    if over:
        kept.append(
            TextPart(
                text=f"[{over:,} more media part(s) not shown: at most "
                f"{limits.max_media_parts} per result]"
            )
        )
    return kept, over > 0 or any(k is not p for k, p in zip(kept, parts, strict=False))


def data_text(value: Any) -> str:
    """A result's ``data`` as the text the model reads: a string as it is, a pydantic model
    as its JSON, anything else as JSON (values JSON cannot hold as their ``str``); never
    raises."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=_jsonable)
    except (TypeError, ValueError):  # a circular structure
        return str(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


def bound_result(result: ToolResultData, limits: ResultLimits) -> ToolResultData:
    """``result`` within ``limits`` (see the module docstring); the same object when it fits."""
    update: dict[str, Any] = {}
    text_limit = limits.max_text_chars
    data = result.data
    # A short string, what most tools return, is within the limit without being measured.
    short = type(data) is str and len(data) + 2 <= text_limit
    if data is not None and not short and json_size(data, text_limit) > text_limit:
        text = data_text(data)
        if len(text) > text_limit:
            update["data"] = cut_text(text, text_limit)
    if result.message is not None and len(result.message) > text_limit:
        update["message"] = cut_text(result.message, text_limit, "message")
    if result.summary is not None and len(result.summary) > text_limit:
        update["summary"] = cut_text(result.summary, text_limit, "summary")
    render = result.render_data
    if render is not None:
        size = json_size(render, limits.max_render_chars)
        if size > limits.max_render_chars:
            update["render_data"] = {
                "omitted": f"render_data of more than {limits.max_render_chars:,} characters "
                "(as JSON) was not kept (ResultLimits.max_render_chars)"
            }
    if result.content:
        kept, changed = check_media(list(result.content), limits)
        if changed:
            update["content"] = kept
    return result.model_copy(update=update) if update else result
