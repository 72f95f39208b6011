"""The store protocols: where a conversation lives.

``StoreAdapter`` is required: messages and counters. The capability protocols are optional; a
store that implements one switches the matching feature on (tasks → ``glove_update_tasks``,
permissions → remembered answers, inbox → ``glove_post_to_inbox``, turn lock → turns of one
conversation never overlap, even from several processes; compacted history → a request reads
only what the model sees, from the last compaction on).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, TypeGuard, TypeVar, runtime_checkable

from glove_core.abort import AbortSignal
from glove_core.types import InboxItem, Message, Task, Usage

__all__ = [
    "CompactedHistoryStore",
    "InboxStore",
    "PermissionStatus",
    "PermissionStore",
    "PositionalHistoryStore",
    "ReplyStore",
    "RequestStart",
    "RequestStartStore",
    "StoreAdapter",
    "TaskStore",
    "TurnLockStore",
    "count_messages",
    "has_capability",
    "read_messages_from",
    "read_visible_history",
    "since_last_compaction",
]

PermissionStatus = Literal["granted", "denied"]
InboxStatus = Literal["pending", "resolved", "consumed"]


_Capability = TypeVar("_Capability")
_capabilities: dict[tuple[type, type], bool] = {}


def has_capability(store: object, capability: type[_Capability]) -> TypeGuard[_Capability]:
    """``isinstance(store, capability)`` for a runtime-checkable capability protocol (of a
    store, an event queue), answered once per class: a runtime-checkable protocol's check looks
    up every method on the instance each time, and the loop asks it at every request. The
    capabilities are methods of the object's class, so the class decides."""
    key = (type(store), capability)
    known = _capabilities.get(key)
    if known is None:
        known = _capabilities[key] = isinstance(store, capability)
    return known


def inbox_changes(
    status: InboxStatus | None, response: str | None, resolved_at: str | None
) -> dict[str, object]:
    """The fields an ``update_inbox_item`` call sets (None leaves a field as it is)."""
    changes: dict[str, object] = {}
    if status is not None:
        changes["status"] = status
    if response is not None:
        changes["response"] = response
    if resolved_at is not None:
        changes["resolved_at"] = resolved_at
    return changes


@runtime_checkable
class StoreAdapter(Protocol):
    """Messages and counters of one conversation."""

    @property
    def identifier(self) -> str:
        """The conversation's id."""
        ...

    async def get_messages(self) -> list[Message]:
        """Every saved message, oldest first (compaction hides none of them here)."""
        ...

    async def append_messages(self, messages: list[Message]) -> None:
        """Save messages at the end, all or none."""
        ...

    async def get_usage(self) -> Usage:
        """Tokens used by this conversation so far."""
        ...

    async def add_usage(self, usage: Usage) -> None:
        """Add one model call's tokens to the total."""
        ...

    async def get_turn_count(self) -> int:
        """How many model calls this conversation made."""
        ...

    async def increment_turn(self) -> None:
        """Count one more model call."""
        ...

    async def reset_counters(self) -> None:
        """Set the token and turn counters to zero."""
        ...


@dataclass(frozen=True)
class RequestStart:
    """What a request reads before its first model call (``RequestStartStore``)."""

    messages: list[Message]
    """The visible history: the newest compaction on (``get_messages_since_compaction``)."""
    usage: Usage
    """The conversation's token totals (``get_usage``)."""
    inbox: list[InboxItem]
    """Every inbox item, oldest first (``get_inbox_items``; empty without an inbox)."""


@runtime_checkable
class RequestStartStore(Protocol):
    """Optional: everything a request reads at its start, in one read.

    A request reads the visible history, the token totals and the inbox before its first
    model call; a store that implements this answers all three at once (on PostgreSQL one
    statement instead of four), as one consistent snapshot.
    """

    async def read_request_start(self) -> RequestStart:
        """The visible history, the token totals and every inbox item."""
        ...


@runtime_checkable
class ReplyStore(Protocol):
    """Optional: a model's reply saved together with what it cost.

    After each model call the loop saves the reply, adds its tokens and counts the call. A
    store that implements this does all three in one write (on PostgreSQL one statement
    instead of three), and they are kept or lost together; a store without it gets
    ``append_messages``, ``add_usage`` and ``increment_turn`` in that order.
    """

    async def append_reply(self, message: Message, usage: Usage) -> None:
        """Append ``message``, add ``usage`` to the totals and count one model call."""
        ...


@runtime_checkable
class CompactedHistoryStore(Protocol):
    """Optional: the visible part of a conversation, read without reading the rest.

    The model sees a conversation from its newest compaction summary on; everything before
    stays in the store for the application (``get_messages``) but is never sent again. A store
    that implements this lets the loop read only that part, so the cost of a request follows
    what the model sees, not everything ever said. A store without it is read whole and
    filtered.

    The contract: ``get_messages_since_compaction()`` equals ``get_messages()`` cut at its last
    message with ``is_compaction=True`` (that message included), or all of it when there is
    none — and costs in proportion to what it returns.
    """

    async def get_messages_since_compaction(self) -> list[Message]:
        """The newest compaction message (inclusive) and every message after it, oldest
        first; every message when the conversation was never compacted."""
        ...


async def read_visible_history(store: StoreAdapter) -> list[Message]:
    """The conversation from its newest compaction on: through ``CompactedHistoryStore``
    when ``store`` has it, else ``get_messages()`` filtered."""
    if has_capability(store, CompactedHistoryStore):
        return await store.get_messages_since_compaction()
    return since_last_compaction(await store.get_messages())


def since_last_compaction(messages: Sequence[Message]) -> list[Message]:
    """``messages`` from the last one with ``is_compaction=True`` on (all when none is)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].is_compaction:
            return list(messages[index:])
    return list(messages)


@runtime_checkable
class PositionalHistoryStore(Protocol):
    """Optional: a conversation's length, and its messages from a position on, read without
    reading (and parsing) the messages before it.

    Whoever follows a conversation as it grows (the headless server's follow streams) reads
    only what is new. The contract: ``count_messages()`` equals ``len(get_messages())`` and
    ``get_messages_from(start)`` equals ``get_messages()[start:]`` (empty past the end).
    """

    async def count_messages(self) -> int:
        """How many messages the conversation has."""
        ...

    async def get_messages_from(self, start: int) -> list[Message]:
        """The messages from position ``start`` (0-based) on, oldest first.

        Raises:
            ValueError: ``start`` is not an int >= 0.
        """
        ...


def check_start(start: int) -> int:
    """``start`` when it is a valid position for ``get_messages_from``."""
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start must be an int >= 0, got {start!r}")
    return start


async def read_messages_from(store: StoreAdapter, start: int) -> list[Message]:
    """``store``'s messages from position ``start`` on: through ``PositionalHistoryStore``
    when ``store`` has it, else ``get_messages()`` sliced."""
    check_start(start)
    if has_capability(store, PositionalHistoryStore):
        return await store.get_messages_from(start)
    return (await store.get_messages())[start:]


async def count_messages(store: StoreAdapter) -> int:
    """How many messages ``store`` holds: through ``PositionalHistoryStore`` when it has it."""
    if has_capability(store, PositionalHistoryStore):
        return await store.count_messages()
    return len(await store.get_messages())


@runtime_checkable
class TaskStore(Protocol):
    """Optional: the agent's task list."""

    async def get_tasks(self) -> list[Task]:
        """The current task list."""
        ...

    async def set_tasks(self, tasks: list[Task]) -> None:
        """Replace the whole task list."""
        ...


@runtime_checkable
class PermissionStore(Protocol):
    """Optional: remembered answers to permission requests, per tool and input."""

    async def get_permission(self, tool_name: str, input_key: str) -> PermissionStatus | None:
        """The remembered answer, or None when the user was never asked."""
        ...

    async def set_permission(
        self, tool_name: str, input_key: str, status: PermissionStatus
    ) -> None:
        """Remember an answer."""
        ...


@runtime_checkable
class InboxStore(Protocol):
    """Optional: requests posted by the agent and resolved from outside later."""

    async def get_inbox_items(self) -> list[InboxItem]:
        """Every inbox item of the conversation."""
        ...

    async def add_inbox_item(self, item: InboxItem) -> None:
        """Save a new item."""
        ...

    async def update_inbox_item(
        self,
        item_id: str,
        *,
        status: InboxStatus | None = None,
        response: str | None = None,
        resolved_at: str | None = None,
    ) -> None:
        """Change an item's status, response or resolution time."""
        ...

    async def get_resolved_inbox_items(self) -> list[InboxItem]:
        """Items resolved but not yet shown to the agent."""
        ...


@runtime_checkable
class TurnLockStore(Protocol):
    """Optional: a per-conversation turn lock shared by every process using the store.

    A Glove whose store implements it holds the lock for each whole turn — from before the
    turn preparers and the repair of tool calls left unanswered, to after the last message of
    the turn is saved — so two processes (or two store objects) on one conversation take turns
    instead of interleaving their messages.

    The contract, for any store that implements it:

    - While one holder is inside ``turn_lock``, no other holder for the same conversation
      enters it; different conversations never wait for each other.
    - A holder that dies (crash, SIGKILL) releases the lock; the next turn finds the
      conversation as the holder's last committed write left it and answers any tool calls
      still open as interrupted.
    - Waiting never blocks the event loop; ``signal`` aborts the wait (``AbortError``) and so
      does cancelling the task. A wait longer than the store's timeout raises
      ``ConversationLockedError``; nothing was saved by the turn that gave up.
    - Not reentrant: a holder must not ask for the lock again before releasing it.
    """

    def turn_lock(self, signal: AbortSignal) -> AbstractAsyncContextManager[None]:
        """Hold the conversation's turn lock while the ``async with`` block runs.

        Raises:
            ConversationLockedError: the lock stayed held elsewhere past the timeout.
            AbortError: ``signal`` fired while waiting.
        """
        ...
