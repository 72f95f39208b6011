"""MemoryStore: a conversation kept in process memory, with every optional capability."""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel

from glove_core.stores.base import PermissionStatus
from glove_core.types import InboxItem, Message, Task, Usage

__all__ = ["MemoryStore"]


class MemoryStore:
    """Keeps one conversation in memory; lost when the process ends.

    Implements ``StoreAdapter`` and the task, permission and inbox capabilities. Messages are
    copied on the way in and out, so callers cannot change saved history by accident.
    """

    def __init__(self, identifier: str = "memory") -> None:
        self._identifier = identifier
        self._messages: list[Message] = []
        self._usage = Usage()
        self._turns = 0
        self._tasks: list[Task] = []
        self._permissions: dict[tuple[str, str], PermissionStatus] = {}
        self._inbox: dict[str, InboxItem] = {}

    @property
    def identifier(self) -> str:
        return self._identifier

    async def get_messages(self) -> list[Message]:
        # The loop reads the whole history once per request, so this copy is the store's
        # largest cost: _deep_copy makes the same copy as model_copy(deep=True), 2-3x faster.
        memo: dict[int, Any] = {}
        return [_deep_copy(m, memo) for m in self._messages]

    async def append_messages(self, messages: list[Message]) -> None:
        memo: dict[int, Any] = {}
        self._messages.extend(_deep_copy(m, memo) for m in messages)

    async def get_usage(self) -> Usage:
        return self._usage.model_copy()

    async def add_usage(self, usage: Usage) -> None:
        self._usage = self._usage + usage

    async def get_turn_count(self) -> int:
        return self._turns

    async def increment_turn(self) -> None:
        self._turns += 1

    async def reset_counters(self) -> None:
        self._usage = Usage()
        self._turns = 0

    async def get_tasks(self) -> list[Task]:
        return [t.model_copy() for t in self._tasks]

    async def set_tasks(self, tasks: list[Task]) -> None:
        self._tasks = [t.model_copy() for t in tasks]

    async def get_permission(self, tool_name: str, input_key: str) -> PermissionStatus | None:
        return self._permissions.get((tool_name, input_key))

    async def set_permission(
        self, tool_name: str, input_key: str, status: PermissionStatus
    ) -> None:
        self._permissions[(tool_name, input_key)] = status

    async def get_inbox_items(self) -> list[InboxItem]:
        return [i.model_copy() for i in self._inbox.values()]

    async def add_inbox_item(self, item: InboxItem) -> None:
        if item.id in self._inbox:
            raise ValueError(f"inbox item {item.id!r} already exists")
        self._inbox[item.id] = item.model_copy()

    async def update_inbox_item(
        self,
        item_id: str,
        *,
        status: Literal["pending", "resolved", "consumed"] | None = None,
        response: str | None = None,
        resolved_at: str | None = None,
    ) -> None:
        item = self._inbox.get(item_id)
        if item is None:
            raise KeyError(f"no inbox item {item_id!r} in conversation {self._identifier!r}")
        changes: dict[str, object] = {}
        if status is not None:
            changes["status"] = status
        if response is not None:
            changes["response"] = response
        if resolved_at is not None:
            changes["resolved_at"] = resolved_at
        self._inbox[item_id] = item.model_copy(update=changes)

    async def get_resolved_inbox_items(self) -> list[InboxItem]:
        return [i.model_copy() for i in self._inbox.values() if i.status == "resolved"]

    def __repr__(self) -> str:
        return f"MemoryStore({self._identifier!r}, messages={len(self._messages)})"


_IMMUTABLE: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
_MISSING = object()
_MODEL_DEEPCOPY = BaseModel.__deepcopy__
_set_attribute = object.__setattr__


def _deep_copy(value: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy(value, memo)``, with fast paths for what messages are made of.

    Plain lists, plain dicts with immutable keys, and pydantic models that use pydantic's own
    ``__deepcopy__`` with no private attributes or extras are copied here exactly as
    ``copy.deepcopy`` and ``BaseModel.__deepcopy__`` copy them, sharing ``memo`` so shared and
    cyclic references keep their shape. Anything else goes to ``copy.deepcopy``.
    """
    cls = type(value)
    if cls in _IMMUTABLE:
        return value
    found = memo.get(id(value), _MISSING)
    if found is not _MISSING:
        return found
    if cls is list:
        new_list: list[Any] = value.copy()
        memo[id(value)] = new_list
        for index, item in enumerate(new_list):
            if type(item) not in _IMMUTABLE:
                new_list[index] = _deep_copy(item, memo)
        return new_list
    if cls is dict:
        new_dict: dict[Any, Any] = value.copy()
        for key in new_dict:
            if type(key) not in _IMMUTABLE:
                return copy.deepcopy(value, memo)
        memo[id(value)] = new_dict
        for key, item in new_dict.items():
            if type(item) not in _IMMUTABLE:
                new_dict[key] = _deep_copy(item, memo)
        return new_dict
    if (
        isinstance(value, BaseModel)
        and cls.__deepcopy__ is _MODEL_DEEPCOPY
        and getattr(value, "__pydantic_private__", None) is None
        and value.__pydantic_extra__ is None
    ):
        model_cls: type[BaseModel] = cls
        model = model_cls.__new__(model_cls)
        memo[id(value)] = model
        fields: dict[str, Any] = value.__dict__.copy()
        for key, item in fields.items():
            if type(item) not in _IMMUTABLE:
                fields[key] = _deep_copy(item, memo)
        _set_attribute(model, "__dict__", fields)
        _set_attribute(model, "__pydantic_extra__", None)
        _set_attribute(model, "__pydantic_fields_set__", value.__pydantic_fields_set__.copy())
        _set_attribute(model, "__pydantic_private__", None)
        return model
    return copy.deepcopy(value, memo)
