"""The inbox: requests the agent posts now and something outside answers later.

``glove_post_to_inbox`` saves a pending ``InboxItem``; another process resolves it (for a
SQLite store: ``SqliteStore.resolve_inbox_item``). At the start of the next request the loop
calls ``take_resolved_inbox``: resolved items become one saved user message with
``framework_context="inbox"`` and are marked consumed, so each answer is shown once. While
blocking items are pending, ``blocking_reminder`` builds a transient message that is sent with
each model call and never saved; ``place_transient`` puts it where it cannot come between a
tool_use and its tool_result.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from glove_core.stores.base import InboxStore, StoreAdapter, has_capability
from glove_core.tools import Tool, ToolContext
from glove_core.types import InboxItem, Message, ToolResultData

__all__ = [
    "POST_TO_INBOX_TOOL_NAME",
    "PostToInboxInput",
    "SaveMessages",
    "blocking_reminder",
    "format_pending_inbox",
    "pending_blocking_reminder",
    "place_transient",
    "post_to_inbox_tool",
    "take_resolved_inbox",
]

logger = logging.getLogger(__name__)

SaveMessages = Callable[[list[Message]], Awaitable[None]]
"""Saves messages at the end of the conversation (``store.append_messages`` or the loop's own)."""

POST_TO_INBOX_TOOL_NAME = "glove_post_to_inbox"
"""The name the model calls the inbox tool by."""

_DESCRIPTION = (
    "Post a request that cannot be answered now and will be resolved later by someone or "
    "something outside this conversation (a person, a background job, a webhook). The answer "
    "arrives as a message at the start of a later request. Set blocking=true only when you "
    "cannot continue the user's task without the answer."
)


class PostToInboxInput(BaseModel):
    """Input of ``glove_post_to_inbox``."""

    model_config = ConfigDict(extra="forbid")

    tag: str = Field(min_length=1, description="A short category label, e.g. 'restock_watch'.")
    request: str = Field(min_length=1, description="What needs to happen, in plain language.")
    blocking: bool = Field(
        default=False, description="True when you must wait for the answer before continuing."
    )


async def _post_to_inbox(input: PostToInboxInput, ctx: ToolContext) -> ToolResultData:
    store = ctx.glove.store
    if not has_capability(store, InboxStore):
        return ToolResultData(
            status="error",
            message="this conversation's store has no inbox; tell the user what you need instead",
        )
    item = InboxItem(
        tag=input.tag,
        request=input.request,
        blocking=input.blocking,
        created_at=datetime.now(UTC).isoformat(),
    )
    await store.add_inbox_item(item)
    then = (
        "Tell the user you are waiting for it; do not act on its outcome until it arrives."
        if item.blocking
        else "Continue with other work; the answer will arrive in a later request."
    )
    return ToolResultData(
        status="success",
        data={"id": item.id, "status": "pending", "note": f"Posted to the inbox. {then}"},
        render_data={"inbox_item": item.model_dump()},
    )


def post_to_inbox_tool() -> Tool:
    """A fresh ``glove_post_to_inbox`` tool; it writes to the running Glove's store."""
    return Tool(
        name=POST_TO_INBOX_TOOL_NAME,
        description=_DESCRIPTION,
        do=_post_to_inbox,
        input_model=PostToInboxInput,
    )


async def take_resolved_inbox(
    store: StoreAdapter,
    save: SaveMessages | None = None,
    items: Sequence[InboxItem] | None = None,
) -> Message | None:
    """Save the resolved inbox items as one message and mark them consumed.

    Call it once at the start of a request, after any repair of dangling tool calls and before
    the user's message is saved. The message is saved *before* the items are marked consumed,
    so a crash in between shows an answer twice rather than never.

    Args:
        store: the conversation store; a store without the inbox capability returns None.
        save: how to save the message (the loop passes its own, which also extends its
            in-memory history); ``store.append_messages`` when omitted.
        items: the conversation's inbox items as just read (``RequestStartStore``); read
            from the store when omitted.

    Returns:
        The saved message (``sender="user"``, ``framework_context="inbox"``), or None when
        nothing was resolved.
    """
    inbox = store if has_capability(store, InboxStore) else None
    if inbox is None:
        return None
    if items is None:
        items = await inbox.get_resolved_inbox_items()
    else:
        items = [i for i in items if i.status == "resolved"]
    if not items:
        return None
    lines = ["Answers arrived for requests you posted to the inbox earlier:"]
    for item in items:
        lines.append(
            f'<inbox_item id="{_attr(item.id)}" tag="{_attr(item.tag)}" '
            f'resolved_at="{_attr(item.resolved_at or "")}">\n'
            f"request: {item.request}\nresponse: {item.response or ''}\n</inbox_item>"
        )
    message = Message(sender="user", text="\n".join(lines), framework_context="inbox")
    await (save or store.append_messages)([message])
    for item in items:
        await inbox.update_inbox_item(item.id, status="consumed")
    logger.debug("delivered %d resolved inbox item(s) to %r", len(items), store.identifier)
    return message


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def blocking_reminder(items: Sequence[InboxItem]) -> Message | None:
    """A transient reminder of the pending blocking items among ``items``, or None.

    Never save it: it is rebuilt for each model call and disappears once the items resolve.
    """
    waiting = [i for i in items if i.blocking and i.status == "pending"]
    if not waiting:
        return None
    lines = [
        "Reminder: you are waiting for answers to these blocking inbox requests. Do not act "
        "as if they were answered; tell the user you are waiting if they ask about them."
    ]
    lines.extend(f"- {i.id} [{i.tag}] {i.request}" for i in waiting)
    return Message(sender="user", text="\n".join(lines), framework_context="inbox")


async def pending_blocking_reminder(store: StoreAdapter) -> Message | None:
    """``blocking_reminder`` for the store's current inbox (None without an inbox)."""
    if not has_capability(store, InboxStore):
        return None
    return blocking_reminder(await store.get_inbox_items())


def format_pending_inbox(items: Sequence[InboxItem]) -> str:
    """Pending items as lines (for compaction summaries), empty when none are pending."""
    return "\n".join(
        f"- {i.id} [{i.tag}]{' (blocking)' if i.blocking else ''}: {i.request}"
        for i in items
        if i.status == "pending"
    )


def place_transient(history: Sequence[Message], transient: Message | None) -> list[Message]:
    """``history`` with ``transient`` inserted where no tool_use/tool_result pair is split.

    That is the end, unless the last message is an agent reply with tool calls still waiting
    for their results; then the reminder goes just before that reply.
    """
    messages = list(history)
    if transient is None:
        return messages
    index = len(messages)
    if messages and messages[-1].sender == "agent" and messages[-1].tool_calls:
        index -= 1
    messages.insert(index, transient)
    return messages
