"""The data that crosses boundaries: messages, tool calls and results, usage, tasks, inbox items.

All of it is pydantic v2 and round-trips through JSON unchanged, because stores persist it and
model adapters convert it. The models are frozen values: a store may hand the same object to
several readers, so change one by building a new one (``message.model_copy(update={...})``),
never by mutating it or the lists and dicts inside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ContentPart",
    "DocumentPart",
    "FrameworkContext",
    "ImagePart",
    "InboxItem",
    "Message",
    "Sender",
    "Task",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "ToolResultData",
    "ToolStatus",
    "Usage",
    "new_id",
    "sum_usage",
]

Sender = Literal["user", "agent"]
FrameworkContext = Literal["runtime", "event", "inbox"]
ToolStatus = Literal["success", "error", "aborted"]


def new_id(prefix: str = "") -> str:
    """Return a fresh random identifier, optionally prefixed (``msg_…``, ``call_…``).

    The identifier is ``uuid.uuid4().hex``, built without a ``UUID`` object (every message
    gets one, and ``UUID``'s checks cost more than the random bytes).
    """
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return prefix + raw.hex()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextPart(_Model):
    """A piece of text."""

    type: Literal["text"] = "text"
    text: str


class ImagePart(_Model):
    """An image, inline (base64 ``data``) or by ``url``."""

    type: Literal["image"] = "image"
    media_type: str = Field(description="MIME type, e.g. 'image/png'.")
    data: str | None = Field(default=None, description="Base64-encoded bytes.")
    url: str | None = None


class DocumentPart(_Model):
    """A document such as a PDF, inline (base64 ``data``) or by ``url``."""

    type: Literal["document"] = "document"
    media_type: str = Field(description="MIME type, e.g. 'application/pdf'.")
    data: str | None = Field(default=None, description="Base64-encoded bytes.")
    url: str | None = None
    title: str | None = None


ContentPart = Annotated[TextPart | ImagePart | DocumentPart, Field(discriminator="type")]
"""One part of a message's content: text, an image or a document."""


class ToolCall(_Model):
    """A tool call the model made."""

    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResultData(_Model):
    """What a tool returns.

    ``data`` (and ``content``, for media) reach the model; ``message`` explains an error or an
    abort; ``render_data`` is for the application's UI and never reaches the model;
    ``tool_references`` names tools this result loads (see ``glove_core._deferral``): it is
    saved with the result, so a restarted conversation still knows which tools were loaded.
    ``summary`` is the tool's own short version of ``data``, saved with the result and sent
    instead of it once the result is from an earlier user turn, when the Glove sends
    summaries (``Glove(result_summaries=...)``); it is not sent otherwise.
    """

    status: ToolStatus = "success"
    data: Any = None
    message: str | None = None
    render_data: Any = None
    content: list[ContentPart] | None = Field(
        default=None, description="Media parts (images, documents) the model should see."
    )
    summary: str | None = Field(
        default=None,
        description="The tool's own short version of data, sent instead of it in later turns.",
    )
    tool_references: list[str] | None = Field(
        default=None,
        description=(
            "Names of tools this result makes callable: tools that joined the conversation "
            "after it began (an activated MCP server's) are declared deferred, outside the "
            "cached prompt prefix, and a result that references them loads them."
        ),
    )


class ToolResult(_Model):
    """The result of one tool call, paired with the call by ``call_id``."""

    call_id: str
    name: str
    result: ToolResultData


class Message(_Model):
    """One message of a conversation.

    A user turn has ``sender="user"`` and ``text`` (and ``content`` parts when it carries media);
    the framework answers tool calls with a user message holding ``tool_results``. An agent reply
    has ``text`` and possibly ``tool_calls``. ``framework_context`` marks messages the framework
    wrote (runtime context, outside events, inbox): they are never something the user typed.
    """

    sender: Sender
    text: str = ""
    content: list[ContentPart] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_results: list[ToolResult] | None = None
    is_compaction: bool = False
    framework_context: FrameworkContext | None = None
    id: str = Field(default_factory=lambda: new_id("msg_"))


class Usage(_Model):
    """Token counts of one model call, or a sum of several."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


def sum_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of ``usages`` as one ``Usage`` (one model validated, not one per addition)."""
    input_tokens = output_tokens = cache_read = cache_write = 0
    for usage in usages:
        input_tokens += usage.input_tokens
        output_tokens += usage.output_tokens
        cache_read += usage.cache_read_tokens
        cache_write += usage.cache_write_tokens
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


class Task(_Model):
    """One entry of the agent's task list."""

    id: str
    content: str
    status: Literal["pending", "in_progress", "completed"] = "pending"


class InboxItem(_Model):
    """A request the agent posted that something outside the conversation resolves later."""

    id: str = Field(default_factory=lambda: new_id("inbox_"))
    tag: str
    request: str
    response: str | None = None
    status: Literal["pending", "resolved", "consumed"] = "pending"
    blocking: bool = False
    created_at: str
    resolved_at: str | None = None
