"""Conversations kept in process memory: ``MemoryStore`` (every optional capability) and
``PlainMemoryStore`` (messages and counters only)."""

from __future__ import annotations

from glove_core.errors import InboxItemError
from glove_core.stores.base import (
    InboxStatus,
    PermissionStatus,
    check_start,
    inbox_changes,
)
from glove_core.types import InboxItem, Message, Task, Usage, sum_usage

__all__ = ["MemoryStore", "PlainMemoryStore"]


class PlainMemoryStore:
    """Keeps one conversation's messages and counters in memory, and nothing else.

    Implements ``StoreAdapter`` only, so a Glove on it gets no task or inbox tools (a short-lived
    helper agent, say). Messages are frozen values (see ``glove_core.types``), so they are
    shared, not copied.
    """

    def __init__(self, identifier: str = "memory") -> None:
        self._identifier = identifier
        self._messages: list[Message] = []
        self._compacted_at = 0  # index of the newest compaction message (0 when none)
        self._usage = Usage()
        self._added: list[Usage] = []
        self._turns = 0
        self._permissions: dict[tuple[str, str], PermissionStatus] = {}
        self._inbox: dict[str, InboxItem] = {}

    @property
    def identifier(self) -> str:
        return self._identifier

    async def get_messages(self) -> list[Message]:
        # Messages are frozen values, so readers share them; the list itself is the caller's.
        return list(self._messages)

    async def append_messages(self, messages: list[Message]) -> None:
        if any(m.is_compaction for m in messages):
            self._compacted_at = len(self._messages) + max(
                i for i, m in enumerate(messages) if m.is_compaction
            )
        self._messages.extend(messages)

    async def get_usage(self) -> Usage:
        if self._added:
            self._usage = self._usage + sum_usage(self._added)
            self._added.clear()
        return self._usage

    async def add_usage(self, usage: Usage) -> None:
        # Summed when read: every model call adds one, and an addition validates a new Usage.
        self._added.append(usage)

    async def get_turn_count(self) -> int:
        return self._turns

    async def increment_turn(self) -> None:
        self._turns += 1

    async def reset_counters(self) -> None:
        self._usage = Usage()
        self._added.clear()
        self._turns = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._identifier!r}, messages={len(self._messages)})"


class MemoryStore(PlainMemoryStore):
    """Keeps one conversation in memory; lost when the process ends.

    Implements ``StoreAdapter`` and the compacted-history, positional-history, task,
    permission and inbox capabilities.
    """

    def __init__(self, identifier: str = "memory") -> None:
        super().__init__(identifier)
        self._tasks: list[Task] = []

    async def get_messages_since_compaction(self) -> list[Message]:
        """The newest compaction message and everything after it, oldest first (all messages
        when there is none); a slice, not a scan."""
        return self._messages[self._compacted_at :]

    async def count_messages(self) -> int:
        return len(self._messages)

    async def get_messages_from(self, start: int) -> list[Message]:
        return self._messages[check_start(start) :]

    async def get_tasks(self) -> list[Task]:
        return list(self._tasks)

    async def set_tasks(self, tasks: list[Task]) -> None:
        self._tasks = list(tasks)

    async def get_permission(self, tool_name: str, input_key: str) -> PermissionStatus | None:
        return self._permissions.get((tool_name, input_key))

    async def set_permission(
        self, tool_name: str, input_key: str, status: PermissionStatus
    ) -> None:
        self._permissions[(tool_name, input_key)] = status

    async def get_inbox_items(self) -> list[InboxItem]:
        return list(self._inbox.values())

    async def add_inbox_item(self, item: InboxItem) -> None:
        if item.id in self._inbox:
            raise InboxItemError(
                item.id, f"already exists in conversation {self._identifier!r}; use a new id"
            )
        self._inbox[item.id] = item

    async def update_inbox_item(
        self,
        item_id: str,
        *,
        status: InboxStatus | None = None,
        response: str | None = None,
        resolved_at: str | None = None,
    ) -> None:
        item = self._inbox.get(item_id)
        if item is None:
            raise InboxItemError(item_id, f"no such item in conversation {self._identifier!r}")
        changes = inbox_changes(status, response, resolved_at)
        self._inbox[item_id] = item.model_copy(update=changes)

    async def get_resolved_inbox_items(self) -> list[InboxItem]:
        return [i for i in self._inbox.values() if i.status == "resolved"]
