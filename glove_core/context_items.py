"""Context items: instructions, notices and tool switches added while a conversation runs.

The system prompt never changes mid-conversation (that would invalidate the prompt cache), so
``glove.add_context(items)`` queues items that are saved once, at the next model call, as a
framework message at the end of the history — earlier requests stay byte-identical.

Tool switching follows the same rule: a ``tools`` item switches tools off or on without changing
the tool list sent to the model. The set of switched-off tools is folded from the saved history,
so it survives restarts. Only the application may switch tools on or give instructions; a tool
may add notices and switch tools off.
"""

from __future__ import annotations

import contextvars
import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from glove_core.errors import ContextItemError, ContextKeyConflictError
from glove_core.types import Message

__all__ = [
    "MAX_CONTEXT_ITEM_BYTES",
    "MAX_CONTEXT_PENDING_BYTES",
    "ContextItem",
    "ContextItemQueue",
    "ContextSource",
    "InstructionItem",
    "NoticeItem",
    "ToolsItem",
    "current_tool_call",
    "disable_tools",
    "disabled_tools",
    "enable_tools",
    "instruction",
    "is_restatement",
    "notice",
    "restate_switched_off",
]

MAX_CONTEXT_ITEM_BYTES = 32 * 1024
"""Bytes (as JSON) one context item may take."""
MAX_CONTEXT_PENDING_BYTES = 256 * 1024
"""Default bytes (as JSON) of the context items that may wait for the next model call, over
one ``add_context`` call or several: they are saved as one message, so this bounds it."""
ContextSource = Literal["app", "tool"]

# Set while a tool body runs, so add_context knows a tool (not the app) is calling.
current_tool_call: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "glove_current_tool_call", default=None
)


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InstructionItem(_Item):
    """Something the model should do from now on (from the application only)."""

    kind: Literal["instruction"] = "instruction"
    content: str = Field(min_length=1)


class NoticeItem(_Item):
    """A fact the model should know, e.g. an upload finished."""

    kind: Literal["notice"] = "notice"
    content: str = Field(min_length=1)


class ToolsItem(_Item):
    """Tools switched off (``disable``) or back on (``enable``)."""

    kind: Literal["tools"] = "tools"
    disable: list[str] = Field(default_factory=list)
    enable: list[str] = Field(default_factory=list)


ContextItem = Annotated[InstructionItem | NoticeItem | ToolsItem, Field(discriminator="kind")]
_ITEMS: TypeAdapter[list[ContextItem]] = TypeAdapter(list[ContextItem])


def instruction(content: str) -> InstructionItem:
    """An instruction item: something the model should do from now on."""
    return InstructionItem(content=content)


def notice(content: str) -> NoticeItem:
    """A notice item: a fact the model should know."""
    return NoticeItem(content=content)


def disable_tools(names: Iterable[str]) -> ToolsItem:
    """A tools item switching ``names`` off."""
    return ToolsItem(disable=list(names))


def enable_tools(names: Iterable[str]) -> ToolsItem:
    """A tools item switching ``names`` back on (application only)."""
    return ToolsItem(enable=list(names))


def item_size(item: ContextItem) -> int:
    """The bytes an item counts for the limits: its JSON in UTF-8."""
    return len(item.model_dump_json().encode())


def validate_items(items: object, source: ContextSource) -> list[ContextItem]:
    """Check items before anything is queued.

    Raises:
        ContextItemError: an item is malformed, too large, or not allowed from ``source``.
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise ContextItemError(
            "add_context takes a list of items (instruction(...), notice(...), "
            "disable_tools([...]), enable_tools([...]))"
        )
    try:
        checked = _ITEMS.validate_python(
            [i.model_dump() if isinstance(i, BaseModel) else i for i in items]
        )
    except ValidationError as exc:
        raise ContextItemError(
            f"invalid context item: {exc.errors(include_url=False)[0]['msg']}"
            f" (at {exc.errors()[0]['loc']}); nothing was recorded"
        ) from None
    if not checked:
        raise ContextItemError("add_context got no items; nothing was recorded")
    for item in checked:
        size = item_size(item)
        if size > MAX_CONTEXT_ITEM_BYTES:
            raise ContextItemError(
                f"a {item.kind} item is {size} bytes, over the {MAX_CONTEXT_ITEM_BYTES}-byte "
                "limit; nothing was recorded. Send a short notice and keep the bulk in a tool "
                "result or a file."
            )
        if source == "tool" and isinstance(item, InstructionItem):
            raise ContextItemError(
                "a tool may not add an instruction item (tool output never gets instruction "
                "authority); add a notice(...) instead. Nothing was recorded."
            )
        if source == "tool" and isinstance(item, ToolsItem) and item.enable:
            raise ContextItemError(
                "a tool may switch tools off but never on; only the application may enable "
                f"{item.enable}. Nothing was recorded."
            )
        if isinstance(item, ToolsItem) and not (item.enable or item.disable):
            raise ContextItemError("a tools item must name tools to enable or disable")
    return checked


@dataclass
class ContextItemQueue:
    """Items waiting for the next model call, with per-key idempotency.

    Args:
        max_pending_bytes: the most bytes (items as JSON) that may wait at once, over any
            number of ``add`` calls; default ``MAX_CONTEXT_PENDING_BYTES`` (256 KiB).

    Raises:
        ValueError: ``max_pending_bytes`` is not a whole number of at least 1.
    """

    max_pending_bytes: int = MAX_CONTEXT_PENDING_BYTES
    pending: list[tuple[ContextSource, list[ContextItem]]] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)
    pending_bytes: int = 0

    def __post_init__(self) -> None:
        limit = self.max_pending_bytes
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(
                f"max_context_bytes must be a whole number of at least 1, got {limit!r}"
            )

    def add(self, items: list[ContextItem], source: ContextSource, key: str | None) -> int:
        """Queue checked items; 0 for a retry under a known key.

        Raises:
            ContextKeyConflictError: ``key`` was used with different items.
            ContextItemError: the items would take the queue over ``max_pending_bytes``.
        """
        digest = None
        if key is not None:
            digest = hashlib.sha256(_ITEMS.dump_json(items)).hexdigest()
            known = self.keys.get(key)
            if known == digest:
                return 0
            if known is not None:
                raise ContextKeyConflictError(key)
        size = sum(item_size(item) for item in items)
        if self.pending_bytes + size > self.max_pending_bytes:
            waiting = f" and {self.pending_bytes} bytes already wait" if self.pending else ""
            raise ContextItemError(
                f"add_context got {len(items)} item(s) of {size} bytes{waiting}, over the "
                f"{self.max_pending_bytes}-byte limit for context waiting for the next model "
                "call (Glove(max_context_bytes=)); nothing was recorded. Send less, or keep the "
                "bulk in a tool result or a file."
            )
        if key is not None and digest is not None:
            self.keys[key] = digest
        self.pending.append((source, items))
        self.pending_bytes += size
        return len(items)

    def switched_off(self, saved: set[str]) -> set[str]:
        """``saved`` (the tools switched off by the saved history) with the pending switches
        applied in order."""
        off = set(saved)
        for _source, items in self.pending:
            for item in items:
                if isinstance(item, ToolsItem):
                    off = (off | set(item.disable)) - set(item.enable)
        return off

    def take(self) -> Message | None:
        """The message that saves every pending item, or None; the queue is emptied."""
        if not self.pending:
            return None
        blocks = [_render(source, items) for source, items in self.pending]
        self.pending.clear()
        self.pending_bytes = 0
        return Message(sender="user", text="\n".join(blocks), framework_context="runtime")


def restate_switched_off(disabled: Iterable[str]) -> Message | None:
    """A framework message switching ``disabled`` off again, or None when it is empty.

    Compaction saves it just after a summary, so the history from the summary on still says
    which tools are off: the loop reads only that part of the conversation.
    """
    names = sorted(set(disabled))
    if not names:
        return None
    text = _render("app", [ToolsItem(disable=names)])
    return Message(sender="user", text=text, framework_context="runtime")


def is_restatement(message: Message) -> bool:
    """Whether ``message`` is a switch-off restatement that compaction saved after a summary
    (it is not conversation: a summary right after it has nothing new to compact)."""
    if message.framework_context != "runtime":
        return False
    again = restate_switched_off(disabled_tools([message]))
    return again is not None and again.text == message.text


def _render(source: ContextSource, items: list[ContextItem]) -> str:
    lines = [f'<context_update source="{source}">']
    for item in items:
        if isinstance(item, ToolsItem):
            if item.disable:
                lines.append(f'<tools disable="{_names(item.disable)}" />')
            if item.enable:
                lines.append(f'<tools enable="{_names(item.enable)}" />')
        else:
            lines.append(f"<{item.kind}>{html.escape(item.content, quote=False)}</{item.kind}>")
    lines.append("</context_update>")
    return "\n".join(lines)


def _names(names: list[str]) -> str:
    return html.escape(",".join(names), quote=True)


_UPDATE_RE = re.compile(r'<context_update source="(app|tool)">(.*?)</context_update>', re.DOTALL)
_TOOLS_RE = re.compile(r'<tools (disable|enable)="([^"]*)" />')


def disabled_tools(messages: Sequence[Message], start: Iterable[str] = ()) -> set[str]:
    """The tools switched off, folded from saved context updates in ``messages`` on top of
    ``start`` (the set before the first of them)."""
    disabled: set[str] = set(start)
    for message in messages:
        # Only rows the framework wrote count: a user typing the same text switches nothing.
        if message.framework_context != "runtime" or "<context_update" not in message.text:
            continue
        for update in _UPDATE_RE.finditer(message.text):
            source = update.group(1)
            for action, names in _TOOLS_RE.findall(update.group(2)):
                listed = {n for n in html.unescape(names).split(",") if n}
                if action == "disable":
                    disabled |= listed
                elif source == "app":
                    disabled -= listed
    return disabled
