"""What the SQLite and PostgreSQL conversation stores share above the SQL (internal): their
argument checks and how a row becomes a message or a task list."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter, ValidationError

from glove_core.errors import StoreCorruptError
from glove_core.types import Message, Task

__all__ = ["TASKS", "check_store_args", "parse_messages"]

TASKS = TypeAdapter(list[Task])
"""A task list as stored: its JSON."""


def check_store_args(session_id: object, turn_lock_timeout: float | None) -> None:
    """Raise ``ValueError`` for an empty session id or a negative turn-lock timeout."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
    if turn_lock_timeout is not None and not turn_lock_timeout >= 0:
        raise ValueError(
            f"turn_lock_timeout must be 0 or more seconds, or None (no limit), got "
            f"{turn_lock_timeout}"
        )


def parse_messages(rows: Sequence[tuple[int, str]], where: str, sid: str) -> list[Message]:
    """The messages of ``(seq, json)`` rows, or ``StoreCorruptError`` naming the bad row."""
    try:
        return [Message.model_validate_json(data) for _, data in rows]
    except ValidationError as exc:
        bad = next(seq for seq, data in rows if not _parses(data))
        raise StoreCorruptError(
            where,
            f"message row {bad} of conversation {sid!r} is not a valid message "
            f"({exc.error_count()} error(s))",
        ) from exc


def _parses(data: str) -> bool:
    try:
        Message.model_validate_json(data)
    except ValidationError:
        return False
    return True
