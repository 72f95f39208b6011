"""The single statements ``PostgresStore`` saves and starts a request with (internal).

Each is one statement, so one round trip and a transaction of its own (issue 31: a request
of two model calls and one tool call went from about 36 statements to about 10):

- a save: the session row created or stamped (its row lock orders concurrent appends, so
  each batch stays contiguous), the messages inserted in order, the counters moved when the
  save is a model's reply (``ReplyStore``), and the ``NOTIFY`` that tells followers —
  delivered at commit, like every notification;
- a request's start: the visible history, the inbox and the counters, one snapshot
  (``RequestStartStore``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glove_core.stores._rows import parse_messages, usage_from_row
from glove_core.stores._sqlite_tables import now
from glove_core.stores.base import RequestStart
from glove_core.types import InboxItem, Message, Usage

__all__ = ["REQUEST_START", "append_statement", "request_start"]

_COUNTERS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")

REQUEST_START = (
    "SELECT (SELECT array_agg(ARRAY[seq::text, data] ORDER BY seq) "
    "FROM glove_messages WHERE session_id = %(sid)s AND seq >= COALESCE("
    "(SELECT MAX(seq) FROM glove_messages WHERE session_id = %(sid)s AND is_compaction), 0)), "
    "(SELECT array_agg(data ORDER BY seq) FROM glove_inbox WHERE session_id = %(sid)s), "
    f"{', '.join('s.' + c for c in _COUNTERS)} "
    "FROM (SELECT 1) AS one LEFT JOIN glove_sessions s ON s.session_id = %(sid)s"
)
"""Parameters: ``{"sid": session_id}``; the row goes to ``request_start``."""


def request_start(row: Sequence[Any], where: str, sid: str) -> RequestStart:
    """The ``RequestStart`` of ``REQUEST_START``'s row."""
    pairs = [(int(seq), data) for seq, data in (row[0] or [])]
    return RequestStart(
        messages=parse_messages(pairs, where, sid),
        usage=Usage() if row[2] is None else usage_from_row(row[2:6]),
        inbox=[InboxItem.model_validate_json(str(d)) for d in (row[1] or [])],
    )


def append_statement(
    sid: str, messages: Sequence[Message], usage: Usage | None, channel: str
) -> tuple[str, dict[str, Any]]:
    """The statement (and its parameters) that saves ``messages`` at the end of ``sid``,
    adds ``usage`` and counts a model call when given, and notifies ``channel``."""
    stamp = now()
    params: dict[str, Any] = {
        "sid": sid,
        "stamp": stamp,
        "ids": [m.id for m in messages],
        "senders": [m.sender for m in messages],
        "compactions": [m.is_compaction for m in messages],
        "data": [m.model_dump_json() for m in messages],
        "channel": channel,
    }
    columns, values, counters = "", "", ""
    if usage is not None:
        columns = "".join(f", {c}" for c in _COUNTERS) + ", turns"
        values = "".join(f", %({c})s" for c in _COUNTERS) + ", 1"
        counters = "".join(f", {c} = glove_sessions.{c} + excluded.{c}" for c in _COUNTERS)
        counters += ", turns = glove_sessions.turns + 1"
        params.update(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        )
    statement = (
        f"WITH session AS (INSERT INTO glove_sessions (session_id, created_at, "
        f"updated_at{columns}) VALUES (%(sid)s, %(stamp)s, %(stamp)s{values}) ON CONFLICT "
        f"(session_id) DO UPDATE SET updated_at = excluded.updated_at{counters} RETURNING 1), "
        "saved AS (INSERT INTO glove_messages (session_id, message_id, sender, "
        "is_compaction, data) SELECT %(sid)s, m.id, m.sender, m.is_compaction, m.data "
        "FROM session, unnest(%(ids)s::text[], %(senders)s::text[], "
        "%(compactions)s::boolean[], %(data)s::text[]) "
        "WITH ORDINALITY AS m(id, sender, is_compaction, data, n) ORDER BY m.n RETURNING 1) "
        "SELECT pg_notify(%(channel)s, %(sid)s) FROM (SELECT count(*) FROM saved) AS done"
    )
    return statement, params
