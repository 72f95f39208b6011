"""The per-conversation MCP adapter: which servers are active, and which credentials to use.

``McpAdapter`` is the seam an application implements (like a conversation store). Two come
ready: ``MemoryMcpAdapter`` (a set in memory) and ``SqliteMcpAdapter`` (the active ids in their
own table of a SQLite file, typically the same file as the conversation's ``SqliteStore``, so a
restarted agent reloads the servers its conversation had activated).

Credentials are optional: an adapter may define ``get_access_token(id)`` (a bearer token) and/or
``get_auth_headers(id)`` (any headers; they win when both exist). ``adapter_auth`` calls them
before every HTTP request.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from glove_core.stores._sqlite_schema import use_wal
from glove_mcp.errors import McpStateError

__all__ = [
    "McpAdapter",
    "MemoryMcpAdapter",
    "RefreshingTokenSource",
    "SqliteMcpAdapter",
    "TokenMap",
]

_T = TypeVar("_T")


class RefreshingTokenSource(Protocol):
    """Anything with ``access_token(*, force_refresh=False)``, e.g. ``OAuthTokenSource``."""

    async def access_token(self, *, force_refresh: bool = False) -> str | None: ...


TokenMap = (
    Mapping[str, "str | RefreshingTokenSource"]
    | Callable[[str], str | Awaitable[str | None] | None]
)
"""Tokens per server: a mapping id → token or token source (asked for a fresh token after a
401), or a function id → token (sync or async)."""


@runtime_checkable
class McpAdapter(Protocol):
    """Holds one conversation's active MCP server ids.

    Optional methods, looked up by ``adapter_auth``: ``async get_access_token(id) -> str | None``
    (it is passed ``fresh=True`` after a 401 when it accepts that keyword)
    and ``async get_auth_headers(id) -> Mapping[str, str] | None``.
    """

    @property
    def identifier(self) -> str:
        """Names the conversation in logs."""
        ...

    async def get_active(self) -> list[str]:
        """The ids active in this conversation, in activation order."""
        ...

    async def activate(self, id: str) -> None:
        """Mark ``id`` active (idempotent)."""
        ...

    async def deactivate(self, id: str) -> None:
        """Mark ``id`` inactive (idempotent)."""
        ...


async def _lookup(tokens: TokenMap | None, id: str, fresh: bool) -> str | None:
    if tokens is None:
        return None
    if callable(tokens):
        value = tokens(id)
        if inspect.isawaitable(value):
            return await value
        return value
    found = tokens.get(id)
    if found is None or isinstance(found, str):
        return found
    return await found.access_token(force_refresh=fresh)


class MemoryMcpAdapter:
    """An ``McpAdapter`` holding the active ids in memory.

    Args:
        identifier: names the conversation in logs.
        active: ids active from the start.
        tokens: bearer tokens per server id (a mapping, or a function id → token).
    """

    def __init__(
        self, identifier: str, active: Iterable[str] = (), tokens: TokenMap | None = None
    ) -> None:
        self._identifier = identifier
        self._active: dict[str, None] = dict.fromkeys(active)
        self._tokens = tokens

    @property
    def identifier(self) -> str:
        """Names the conversation in logs."""
        return self._identifier

    async def get_active(self) -> list[str]:
        """The active ids, in activation order."""
        return list(self._active)

    async def activate(self, id: str) -> None:
        """Mark ``id`` active."""
        self._active.setdefault(id, None)

    async def deactivate(self, id: str) -> None:
        """Mark ``id`` inactive."""
        self._active.pop(id, None)

    async def get_access_token(self, id: str, *, fresh: bool = False) -> str | None:
        """The bearer token for server ``id`` from ``tokens``, or None; ``fresh=True`` (after
        a 401) asks a token source for a refreshed one."""
        return await _lookup(self._tokens, id, fresh)

    def __repr__(self) -> str:
        return f"MemoryMcpAdapter({self._identifier!r}, active={list(self._active)!r})"


_SCHEMA = """CREATE TABLE IF NOT EXISTS glove_mcp_active (
    conversation_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    activated_at TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, server_id)
)"""


class SqliteMcpAdapter:
    """An ``McpAdapter`` keeping active ids per conversation in a SQLite file.

    The ids live in table ``glove_mcp_active``, so the file can be the one a ``SqliteStore``
    uses for the conversation. WAL mode and a busy timeout let several processes share it.
    Every sqlite3 call runs in a worker thread. Close with ``aclose()`` (or ``async with``).

    Args:
        path: the SQLite file (created when missing).
        conversation_id: the conversation whose active ids this adapter holds.
        tokens: bearer tokens per server id (a mapping, or a function id → token).
        busy_timeout: seconds a write waits for another writer before failing.
    """

    def __init__(
        self,
        path: str | Path,
        conversation_id: str,
        tokens: TokenMap | None = None,
        *,
        busy_timeout: float = 5.0,
    ) -> None:
        self.path = Path(path)
        self.conversation_id = conversation_id
        self._tokens = tokens
        self._busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        # One connection, used from worker threads one at a time.
        self._lock = threading.Lock()

    @property
    def identifier(self) -> str:
        """The conversation id."""
        return self.conversation_id

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise McpStateError(
                f"SqliteMcpAdapter for {self.conversation_id!r} is closed; create a new one"
            )
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout, check_same_thread=False)
            use_wal(conn, self._busy_timeout)
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout * 1000)}")
            with conn:
                conn.execute(_SCHEMA)
            self._conn = conn
        return self._conn

    async def _run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        def work() -> _T:
            with self._lock:
                return fn(self._connection())

        return await asyncio.to_thread(work)

    async def get_active(self) -> list[str]:
        """The active ids, in activation order."""

        def read(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT server_id FROM glove_mcp_active WHERE conversation_id = ? ORDER BY seq",
                (self.conversation_id,),
            ).fetchall()
            return [row[0] for row in rows]

        return await self._run(read)

    async def activate(self, id: str) -> None:
        """Mark ``id`` active (idempotent; keeps its first activation position)."""
        now = datetime.now(UTC).isoformat()

        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(
                    "INSERT OR IGNORE INTO glove_mcp_active "
                    "(conversation_id, server_id, activated_at, seq) VALUES (?, ?, ?, "
                    "(SELECT COALESCE(MAX(seq), 0) + 1 FROM glove_mcp_active))",
                    (self.conversation_id, id, now),
                )

        await self._run(write)

    async def deactivate(self, id: str) -> None:
        """Mark ``id`` inactive (idempotent)."""

        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute(
                    "DELETE FROM glove_mcp_active WHERE conversation_id = ? AND server_id = ?",
                    (self.conversation_id, id),
                )

        await self._run(write)

    async def get_access_token(self, id: str, *, fresh: bool = False) -> str | None:
        """The bearer token for server ``id`` from ``tokens``, or None; ``fresh=True`` (after
        a 401) asks a token source for a refreshed one."""
        return await _lookup(self._tokens, id, fresh)

    async def aclose(self) -> None:
        """Close the database connection (idempotent)."""

        def close() -> None:
            with self._lock:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(close)

    async def __aenter__(self) -> SqliteMcpAdapter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"SqliteMcpAdapter({str(self.path)!r}, {self.conversation_id!r})"
