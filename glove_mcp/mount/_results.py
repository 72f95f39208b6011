"""What the model sees of an MCP tool result or resource read, and what is kept of it.

Results: ``structured_content`` when the server sent it, else the text blocks joined by
newlines; but the text when the structured part is mostly binary or much larger than the
text, and never base64 the model cannot use (the rule is in ``glove_mcp.mount._structured``).
Images go to the model as ``ImagePart`` in ``ToolResultData.content``, and so do
embedded blob resources whose type a model takes (PNG, JPEG, GIF, WebP). Audio and other blobs
have no content part in glove_core, so the model sees a placeholder giving their type and size
(a ``text/*`` blob in UTF-8 is shown as its text); the bytes stay in ``render_data`` (the
content list in MCP's JSON shape, empty fields left out) for the application's UI. A block
annotated for the user alone (``audience == ["user"]``) goes to ``render_data`` only, never to
the model. A resource link says how to read it: with the server's ``<id>__read_resource`` tool.

Bounds, applied to the blocks before anything is made of them, so the model, ``render_data``
and the stored history all get the bounded blocks (``bound_blocks``):

- text (text blocks, embedded text, ``text/*`` blobs, resource links) shares one budget of
  ``max_result_chars``: the block that crosses it is cut with a note saying how much was cut,
  later ones are left out and counted in a note at the end;
- binary data (images, audio, blobs) must be valid base64 of at most
  ``ResultLimits.max_media_bytes`` decoded, at most ``ResultLimits.max_media_parts`` per
  result; a block that fails is replaced by a text note saying why, in its place;
- an image of a type no model takes stays in ``render_data``; the model sees a placeholder;
- ``structured_content`` larger than ``max_result_chars`` as JSON becomes its cut JSON text.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from glove_core import ImagePart, ToolResultData
from glove_core.result_limits import (
    IMAGE_TYPES,
    ResultLimits,
    cut_text,
    data_text,
    decoded_size,
    json_size,
)
from glove_mcp.mount._structured import for_model as structured_for_model
from glove_mcp.types import (
    McpAudioContent,
    McpCallResult,
    McpContent,
    McpEmbeddedResource,
    McpImageContent,
    McpReadResult,
    McpResourceContents,
    McpResourceLink,
    McpTextContent,
)

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "MODEL_IMAGE_TYPES",
    "bound_blocks",
    "check_max_result_chars",
    "convert_call_result",
    "convert_read_result",
]

DEFAULT_MAX_RESULT_CHARS = 100_000
"""Text of one result (as the model sees it, and as it is kept) beyond this is cut with a note."""

_LIMITS = ResultLimits()  # frozen: the defaults, shared

MODEL_IMAGE_TYPES = IMAGE_TYPES
"""Image types every model provider takes as an image part; other images are placeholders."""


def check_max_result_chars(value: int) -> int:
    """``value`` if it is a valid ``max_result_chars``, else ``ValueError`` naming it."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"max_result_chars must be a whole number of at least 1, got {value!r}")
    return value


# -- bounds ------------------------------------------------------------------------------------


def _blob_problem(data: str, limits: ResultLimits) -> str | None:
    cap = limits.max_media_bytes
    if len(data) > (cap + 2) // 3 * 4 + 4:
        return f"it is larger than {cap:,} bytes (the limit)"
    size = decoded_size(data)
    if size is None:
        return "its data is not valid base64"
    if size > cap:
        return f"it is {size:,} bytes, over the limit of {cap:,}"
    return None


def _binary(block: McpContent) -> tuple[str, str] | None:
    """(kind and type, base64 data) of a block that carries binary data."""
    if isinstance(block, McpImageContent | McpAudioContent):
        return f"{block.type} ({block.mime_type})", block.data
    blob = block.resource.blob if isinstance(block, McpEmbeddedResource) else None
    if isinstance(block, McpEmbeddedResource) and blob is not None:
        resource = block.resource
        return f"resource {resource.uri} ({resource.mime_type or 'binary'})", blob
    return None


def _text_size(block: McpContent) -> int:
    if isinstance(block, McpTextContent):
        return len(block.text)
    if isinstance(block, McpResourceLink):
        return len(block.uri) + len(block.name) + 40
    if isinstance(block, McpEmbeddedResource):
        return len(block.resource.text or "") + len(block.resource.uri)
    return 0


def _cut_block(block: McpContent, left: int) -> McpContent | None:
    """``block`` with its text cut to ``left`` characters, or None for a block that can't be
    cut (a resource link)."""
    if isinstance(block, McpTextContent):
        return block.model_copy(update={"text": cut_text(block.text, left)})
    if isinstance(block, McpEmbeddedResource) and block.resource.text is not None:
        resource = block.resource.model_copy(update={"text": cut_text(block.resource.text, left)})
        return block.model_copy(update={"resource": resource})
    return None


def _as_text(block: McpContent) -> McpContent:
    """A ``text/*`` blob in UTF-8 as embedded text (so the text budget can cut it)."""
    if not isinstance(block, McpEmbeddedResource):
        return block
    text = _text_of_blob(block.resource)
    if text is None:
        return block
    resource = block.resource.model_copy(update={"text": text, "blob": None})
    return block.model_copy(update={"resource": resource})


def bound_blocks(
    blocks: Sequence[McpContent], max_chars: int, limits: ResultLimits
) -> list[McpContent]:
    """``blocks`` within the bounds of the module docstring: cut, replaced by notes, and a
    closing note counting those left out."""
    kept: list[McpContent] = []
    left = max_chars
    media = 0
    left_out = 0
    media_over = 0
    for block in blocks:
        binary = _binary(block)
        if binary is not None:
            kind, data = binary
            problem = _blob_problem(data, limits)
            if problem is not None:
                note = f"[{kind} not kept: {problem}]"
                kept.append(McpTextContent(text=note, annotations=block.annotations))
                continue
            as_text = _as_text(block)
            if as_text is block:
                if media >= limits.max_media_parts:
                    media_over += 1
                    continue
                media += 1
                kept.append(block)
                continue
        else:
            as_text = block
        size = _text_size(as_text)
        if size <= left:
            left -= size + 1  # the newline that joins it to the next
            kept.append(block)  # a text blob that fits stays a blob
            continue
        cut = _cut_block(as_text, left) if left > 0 else None
        left = -1
        if cut is None:
            left_out += 1
        else:
            kept.append(cut)
    notes = []
    if left_out:
        notes.append(f"{left_out:,} more block(s) over max_result_chars={max_chars:,}")
    if media_over:
        notes.append(f"{media_over:,} more media block(s) over {limits.max_media_parts} per result")
    if notes:
        kept.append(McpTextContent(text=f"[… not kept: {'; '.join(notes)}]"))
    return kept


# -- what the model sees -----------------------------------------------------------------------


def _b64_size(data: str) -> int:
    """The decoded size of base64 ``data``, without decoding it (blobs may be large)."""
    chars = len(data) - data.count("\n") - data.count("\r")
    return max(0, chars * 3 // 4 - data[-2:].count("="))


def _blob_placeholder(resource: McpResourceContents, shown: bool) -> str:
    kind = resource.mime_type or "binary"
    size = _b64_size(resource.blob or "")
    where = "attached as an image" if shown else "not shown to the model"
    return f"[resource {resource.uri}: {kind}, {size:,} bytes; {where}]"


def _text_of_blob(resource: McpResourceContents) -> str | None:
    """A ``text/*`` blob's text, when it is UTF-8: servers send text as a blob too (the
    reference server does), and the model can read it."""
    if resource.blob is None or not (resource.mime_type or "").startswith("text/"):
        return None
    try:
        return base64.b64decode(resource.blob, validate=False).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _is_model_image(resource: McpResourceContents) -> bool:
    return resource.blob is not None and resource.mime_type in MODEL_IMAGE_TYPES


def _for_user_only(block: McpContent) -> bool:
    audience = block.annotations.audience if block.annotations is not None else None
    return audience is not None and set(audience) == {"user"}


def _text_of(block: McpContent, reader: str | None) -> str | None:
    if isinstance(block, McpTextContent):
        return block.text
    if isinstance(block, McpAudioContent):
        size = _b64_size(block.data)
        return f"[audio: {block.mime_type}, {size} bytes; not shown to the model]"
    if isinstance(block, McpImageContent):
        if block.mime_type in MODEL_IMAGE_TYPES:
            return None  # the image part itself reaches the model
        size = _b64_size(block.data)
        return f"[image: {block.mime_type}, {size:,} bytes; not shown to the model]"
    if isinstance(block, McpEmbeddedResource):
        resource = block.resource
        text = resource.text if resource.text is not None else _text_of_blob(resource)
        if text is not None:
            return text
        if _is_model_image(resource):
            return None  # the image part itself reaches the model
        return _blob_placeholder(resource, shown=False)
    how = f" — read it with {reader}" if reader else ""
    return f"[resource link {block.uri}: {block.name}{how}]"


def _image_of(block: McpContent) -> ImagePart | None:
    if isinstance(block, McpImageContent) and block.mime_type in MODEL_IMAGE_TYPES:
        return ImagePart(media_type=block.mime_type, data=block.data)
    if isinstance(block, McpEmbeddedResource) and _is_model_image(block.resource):
        assert block.resource.mime_type is not None
        return ImagePart(media_type=block.resource.mime_type, data=block.resource.blob)
    return None


def _structured(data: Any, max_chars: int) -> Any:
    if json_size(data, max_chars) <= max_chars:
        return data
    encoded = data_text(data)
    return data if len(encoded) <= max_chars else cut_text(encoded, max_chars)


def convert_call_result(
    namespace: str,
    tool_name: str,
    result: McpCallResult,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    *,
    reader: str | None = None,
    limits: ResultLimits | None = None,
) -> ToolResultData:
    """Turn an ``McpCallResult`` into a ``ToolResultData`` (see the module docstring).

    Args:
        max_result_chars: the text budget of the result (characters).
        reader: the name of the server's resource reader tool, when it is offered; resource
            links then say to read them with it.
        limits: media bounds (size, count); ``ResultLimits()`` when omitted.
    """
    blocks = bound_blocks(result.content, max_result_chars, limits or _LIMITS)
    render = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in blocks]
    for_model = [block for block in blocks if not _for_user_only(block)]
    texts = [t for block in for_model if (t := _text_of(block, reader)) is not None]
    images = [image for block in for_model if (image := _image_of(block)) is not None]
    joined = "\n".join(texts)
    if not joined and not images and len(for_model) < len(blocks):
        # Everything was for the user's eyes: say so rather than send an empty result.
        joined = "[the result was shown to the user only]"
    if result.is_error:
        detail = joined or "(the server gave no message)"
        return ToolResultData(
            status="error",
            message=f"tool {tool_name!r} of MCP server {namespace!r} failed: {detail}",
            render_data=render,
        )
    data: Any = joined
    if result.structured_content is not None:
        chosen, is_text = structured_for_model(result.structured_content, joined, max_result_chars)
        data = chosen if is_text else _structured(chosen, max_result_chars)
    return ToolResultData(status="success", data=data, render_data=render, content=images or None)


def convert_read_result(
    result: McpReadResult,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    *,
    limits: ResultLimits | None = None,
) -> ToolResultData:
    """Turn an ``McpReadResult`` into what the model sees: text contents (and ``text/*`` blobs
    in UTF-8) as text, images a model takes as ``ImagePart``\\s, other blobs as a placeholder
    with their type and size, all within the bounds of the module docstring.
    Several contents are each headed by their URI. ``render_data`` holds every content kept."""
    wrapped = [McpEmbeddedResource(resource=c) for c in result.contents]
    blocks = bound_blocks(wrapped, max_result_chars, limits or _LIMITS)
    render: list[dict[str, Any]] = []
    texts: list[str] = []
    images: list[ImagePart] = []
    several = len(result.contents) > 1
    for block in blocks:
        if isinstance(block, McpTextContent):  # a note about what was not kept
            render.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
            texts.append(block.text)
            continue
        assert isinstance(block, McpEmbeddedResource)
        contents = block.resource
        render.append(contents.model_dump(mode="json", by_alias=True, exclude_none=True))
        text = contents.text if contents.text is not None else _text_of_blob(contents)
        if text is not None:
            texts.append(f"[resource {contents.uri}]\n{text}" if several else text)
        elif _is_model_image(contents):
            assert contents.mime_type is not None
            images.append(ImagePart(media_type=contents.mime_type, data=contents.blob))
            texts.append(_blob_placeholder(contents, shown=True))
        else:
            texts.append(_blob_placeholder(contents, shown=False))
    data = "\n".join(texts) or "[the resource is empty]"
    return ToolResultData(status="success", data=data, render_data=render, content=images or None)
