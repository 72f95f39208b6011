"""What the SQLite and PostgreSQL conversation stores share above the SQL (internal): their
argument checks and how a row becomes a message or a task list."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter, ValidationError

from glove_core.errors import StoreCorruptError
from glove_core.types import Message, Task, Usage

__all__ = [
    "RESET_COUNTERS",
    "TASKS",
    "USAGE_COLUMNS",
    "check_store_args",
    "parse_messages",
    "usage_from_row",
]

TASKS = TypeAdapter(list[Task])
"""A task list as stored: its JSON."""


USAGE_COLUMNS = "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens"
"""The session row's token counters, in ``usage_from_row``'s order."""

RESET_COUNTERS = (
    "input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, turns = 0"
)
"""The assignments that set a session's counters to zero."""


def usage_from_row(row: Sequence[int] | None) -> Usage:
    """The ``Usage`` of a row of ``USAGE_COLUMNS`` (zero for a session never written)."""
    if row is None:
        return Usage()
    return Usage(
        input_tokens=row[0],
        output_tokens=row[1],
        cache_read_tokens=row[2],
        cache_write_tokens=row[3],
    )


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
