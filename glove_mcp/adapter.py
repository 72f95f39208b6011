"""The per-conversation MCP adapter: which servers are active, and which credentials to use.

``McpAdapter`` is the seam an application implements (like a conversation store). Two come
ready: ``MemoryMcpAdapter`` (a set in memory) and ``SqliteMcpAdapter`` (the active ids in their
own table of a SQLite file, typically the same file as the conversation's ``SqliteStore``, so a
restarted agent reloads the servers its conversation had activated).

Learned tools are optional too: an adapter that is also a ``LearnedToolsStore`` keeps the
tools each server listed (name and description, per server id, shared by every conversation
of the store), so discovery can match a server by what its tools do in later conversations.
One that is also a ``LearnedListingsStore`` keeps, beside them, the server's instructions and
when the listing was made and how long the server said it holds (``LearnedListing``), so
discovery ranks on the instructions too and ``index_tools`` lists again only what is stale.
Every adapter here is both; a mount saves a server's tools when it connects, and discovery
reads them back.

Credentials are optional: an adapter may implement ``glove_mcp.auth.AccessTokens``
(``get_access_token(id, *, fresh=False)``, a bearer token) and/or ``glove_mcp.auth.AuthHeaders``
(``get_auth_headers(id)``, any headers; they win when both exist). ``adapter_auth`` calls them
before every HTTP request.
"""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from glove_core.resources import AsyncResource
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT, SqliteDatabase, SqliteSchema
from glove_mcp.auth import TokenSource
from glove_mcp.errors import McpStateError

__all__ = [
    "LEARNED_SERVERS_TABLE",
    "LEARNED_TOOLS_TABLE",
    "MAX_LEARNED_DESCRIPTION",
    "MAX_LEARNED_INSTRUCTIONS",
    "MAX_LEARNED_TOOLS",
    "MAX_LEARNED_TTL_MS",
    "LearnedListing",
    "LearnedListingsStore",
    "LearnedTool",
    "LearnedToolsStore",
    "McpAdapter",
    "MemoryMcpAdapter",
    "SqliteMcpAdapter",
    "TokenMap",
    "learned_instructions",
    "learned_tools",
    "learned_ttl_ms",
]


TokenMap = Mapping[str, "str | TokenSource"] | Callable[[str], str | Awaitable[str | None] | None]
"""Tokens per server: a mapping id → token or token source (asked for a fresh token after a
401), or a function id → token (sync or async)."""


@runtime_checkable
class McpAdapter(Protocol):
    """Holds one conversation's active MCP server ids.

    Credentials are optional protocols of their own, which ``adapter_auth`` checks for:
    ``glove_mcp.auth.AccessTokens`` (``async get_access_token(id, *, fresh=False)``, passed
    ``fresh=True`` after a 401) and ``glove_mcp.auth.AuthHeaders`` (``async
    get_auth_headers(id)``).
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


MAX_LEARNED_TOOLS = 500
"""The most tools kept per server (a listing's first ones)."""

MAX_LEARNED_DESCRIPTION = 500
"""Characters of a tool's description kept for discovery."""

MAX_LEARNED_INSTRUCTIONS = 2000
"""Characters of a server's instructions kept for discovery."""

MAX_LEARNED_TTL_MS = 24 * 60 * 60 * 1000
"""The longest a kept listing counts as fresh, whatever ``ttlMs`` the server gave (a day, as
the connection's list cache caps it)."""


@dataclass(frozen=True)
class LearnedTool:
    """A tool a server listed, as discovery keeps it.

    Attributes:
        name: the server's own (un-namespaced) tool name.
        description: what it does, cut to ``MAX_LEARNED_DESCRIPTION`` characters.
    """

    name: str
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a learned tool needs a non-empty str name, got {self.name!r}")
        if not isinstance(self.description, str):
            raise TypeError(
                f"tool {self.name!r}: description must be a str, got "
                f"{type(self.description).__name__}"
            )


def learned_tools(tools: Iterable[LearnedTool]) -> list[LearnedTool]:
    """``tools`` checked, de-duplicated by name (the first wins), descriptions cut, at most
    ``MAX_LEARNED_TOOLS``.

    Raises:
        TypeError: an item is not a ``LearnedTool``.
    """
    out: dict[str, LearnedTool] = {}
    for tool in tools:
        if not isinstance(tool, LearnedTool):
            raise TypeError(f"learned tools must be LearnedTool objects, got {type(tool).__name__}")
        if tool.name not in out and len(out) < MAX_LEARNED_TOOLS:
            description = tool.description[:MAX_LEARNED_DESCRIPTION]
            out[tool.name] = LearnedTool(tool.name, description)
    return list(out.values())


def learned_instructions(instructions: str | None) -> str:
    """A server's instructions as discovery keeps them: stripped, cut to
    ``MAX_LEARNED_INSTRUCTIONS`` characters; ``""`` for None (the server gave none).

    Raises:
        TypeError: ``instructions`` is neither a str nor None.
    """
    if instructions is None:
        return ""
    if not isinstance(instructions, str):
        raise TypeError(f"instructions must be a str or None, got {type(instructions).__name__}")
    return instructions.strip()[:MAX_LEARNED_INSTRUCTIONS]


def learned_ttl_ms(ttl_ms: int | None) -> int | None:
    """A listing's ``ttlMs`` as discovery keeps it: None when the server gave none or 0 (the
    listing may not be kept as fresh), at most ``MAX_LEARNED_TTL_MS``.

    Raises:
        TypeError: ``ttl_ms`` is neither an int nor None.
        ValueError: ``ttl_ms`` is negative.
    """
    if ttl_ms is None:
        return None
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int):
        raise TypeError(f"ttl_ms must be an int of milliseconds or None, got {ttl_ms!r}")
    if ttl_ms < 0:
        raise ValueError(f"ttl_ms must be 0 or more milliseconds, got {ttl_ms}")
    return min(ttl_ms, MAX_LEARNED_TTL_MS) or None


@dataclass(frozen=True)
class LearnedListing:
    """What a store keeps of a server's last ``tools/list`` beside its tools.

    Attributes:
        instructions: what the server said about how to use it (its ``instructions``), cut
            to ``MAX_LEARNED_INSTRUCTIONS`` characters; ``""`` when it said nothing.
        listed_at: when the kept listing was written (aware, UTC). A listing that brings
            nothing new is not written again while the kept one is fresh (without a TTL:
            while it is unchanged), so this is the time of the last listing that changed
            something or renewed an expired TTL.
        ttl_ms: how long the server said its ``tools/list`` result stays fresh (``ttlMs``,
            milliseconds, at most ``MAX_LEARNED_TTL_MS``); None when it gave none.
    """

    instructions: str
    listed_at: datetime
    ttl_ms: int | None = None

    @classmethod
    def from_row(cls, instructions: object, listed_at: object, ttl_ms: object) -> LearnedListing:
        """A listing as the stores keep it: a row of ``glove_mcp_learned_servers`` (the same
        shape in SQLite and PostgreSQL)."""
        return cls(
            str(instructions),
            datetime.fromisoformat(str(listed_at)),
            int(ttl_ms) if isinstance(ttl_ms, int) else None,
        )

    def fresh_until(self) -> datetime | None:
        """When the kept listing stops being fresh; None when the server gave no TTL."""
        if self.ttl_ms is None:
            return None
        return self.listed_at + timedelta(milliseconds=self.ttl_ms)

    def is_fresh(self, now: datetime | None = None) -> bool:
        """Whether listing the server again can wait: it gave a TTL that has not run out.

        Args:
            now: the time to judge at (aware); the current time by default.
        """
        until = self.fresh_until()
        return until is not None and (now or datetime.now(UTC)) < until

    def unchanged_by(
        self, instructions: str, ttl_ms: int | None, now: datetime | None = None
    ) -> bool:
        """Whether a new listing saying ``instructions`` and ``ttl_ms`` (as kept:
        ``learned_instructions``, ``learned_ttl_ms``) leaves nothing to write: both the same,
        and the kept listing still fresh when it has a TTL (an expired one is renewed)."""
        same = self.instructions == instructions and self.ttl_ms == ttl_ms
        return same and (ttl_ms is None or self.is_fresh(now))


@runtime_checkable
class LearnedToolsStore(Protocol):
    """Optional capability of an ``McpAdapter``: keeps the tools each server listed.

    Per server id, not per conversation: every conversation of the same store shares them.
    A mount calls ``save_learned_tools`` each time a server's tools are listed (connect,
    reload, ``tools/list_changed``) and discovery calls ``get_learned_tools`` when it ranks.
    Both may be called concurrently from one event loop.
    """

    async def save_learned_tools(self, server_id: str, tools: Sequence[LearnedTool]) -> None:
        """Replace what is kept for ``server_id`` by ``tools`` (in listing order)."""
        ...

    async def get_learned_tools(self) -> dict[str, list[LearnedTool]]:
        """Every server's kept tools: server id -> tools in listing order (empty if none)."""
        ...


@runtime_checkable
class LearnedListingsStore(Protocol):
    """Optional capability of a ``LearnedToolsStore``: keeps, per server id, the server's
    instructions and the listing's time and TTL (``LearnedListing``) beside its tools.

    A separate protocol so that stores written for ``LearnedToolsStore`` alone keep working:
    callers check ``isinstance(store, LearnedListingsStore)`` and fall back to
    ``save_learned_tools`` (the instructions and TTL are then not kept: discovery ranks on the
    tools alone, and ``index_tools`` lists such a store's servers again on every run).
    """

    async def save_learned_listing(
        self,
        server_id: str,
        tools: Sequence[LearnedTool],
        *,
        instructions: str | None = None,
        ttl_ms: int | None = None,
    ) -> None:
        """Replace what is kept for ``server_id``: its tools (as ``save_learned_tools``), its
        instructions and the listing's TTL, with the time it was written.

        Args:
            server_id: the catalogue id.
            tools: the listed tools, in listing order.
            instructions: the server's instructions (None: it gave none); cut with
                ``learned_instructions``.
            ttl_ms: the ``tools/list`` result's ``ttlMs`` (None or 0: none); checked with
                ``learned_ttl_ms``.

        Raises:
            TypeError: an item is not a ``LearnedTool``, or a bad ``instructions`` /
                ``ttl_ms`` type.
            ValueError: ``ttl_ms`` is negative.
        """
        ...

    async def get_learned_listings(self) -> dict[str, LearnedListing]:
        """Every server's kept listing: server id -> ``LearnedListing`` (servers whose tools
        were saved with ``save_learned_tools`` alone have none)."""
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
        self._learned: dict[str, list[LearnedTool]] = {}
        self._listings: dict[str, LearnedListing] = {}

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

    async def save_learned_tools(self, server_id: str, tools: Sequence[LearnedTool]) -> None:
        """Keep ``tools`` as what server ``server_id`` offers (``LearnedToolsStore``).

        Raises:
            TypeError: an item is not a ``LearnedTool``.
        """
        self._learned[server_id] = learned_tools(tools)

    async def get_learned_tools(self) -> dict[str, list[LearnedTool]]:
        """Every server's kept tools (``LearnedToolsStore``)."""
        return {id: list(tools) for id, tools in self._learned.items()}

    async def save_learned_listing(
        self,
        server_id: str,
        tools: Sequence[LearnedTool],
        *,
        instructions: str | None = None,
        ttl_ms: int | None = None,
    ) -> None:
        """Keep ``tools``, the server's instructions and the listing's TTL for server
        ``server_id`` (``LearnedListingsStore``).

        Raises:
            TypeError: an item is not a ``LearnedTool``, or a bad ``instructions`` /
                ``ttl_ms`` type.
            ValueError: ``ttl_ms`` is negative.
        """
        kept = learned_tools(tools)
        text, ttl = learned_instructions(instructions), learned_ttl_ms(ttl_ms)
        listing = self._listings.get(server_id)
        if (
            listing is None
            or not listing.unchanged_by(text, ttl)
            or (self._learned.get(server_id) != kept)
        ):
            self._listings[server_id] = LearnedListing(text, datetime.now(UTC), ttl)
        self._learned[server_id] = kept

    async def get_learned_listings(self) -> dict[str, LearnedListing]:
        """Every server's kept listing (``LearnedListingsStore``)."""
        return dict(self._listings)

    def __repr__(self) -> str:
        return f"MemoryMcpAdapter({self._identifier!r}, active={list(self._active)!r})"


LEARNED_TOOLS_TABLE = """CREATE TABLE glove_mcp_learned_tools (
    server_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    learned_at TEXT NOT NULL,
    PRIMARY KEY (server_id, name)
)"""
"""The learned-tools table, the same in SQLite and PostgreSQL."""

LEARNED_SERVERS_TABLE = """CREATE TABLE glove_mcp_learned_servers (
    server_id TEXT NOT NULL PRIMARY KEY,
    instructions TEXT NOT NULL,
    listed_at TEXT NOT NULL,
    ttl_ms BIGINT
)"""
"""Per server, what a listing said beside its tools (``LearnedListing``): its instructions,
when it was written (ISO 8601, UTC) and its TTL in milliseconds (NULL: none). The same in
SQLite and PostgreSQL."""


_ACTIVE_SCHEMA = SqliteSchema(
    name="glove_mcp.active_servers",
    migrations=(
        (
            """CREATE TABLE glove_mcp_active (
    conversation_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    activated_at TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, server_id)
)""",
        ),
        # Learned tools: per server id, shared by every conversation of the file.
        (LEARNED_TOOLS_TABLE,),
        # The servers' instructions and the listings' time and TTL, beside their tools.
        (LEARNED_SERVERS_TABLE,),
    ),
    # Adapters before the shared SQLite layer created the table without recording a version.
    unversioned_tables=("glove_mcp_active",),
)


class SqliteMcpAdapter(AsyncResource):
    """An ``McpAdapter`` keeping active ids per conversation in a SQLite file.

    The ids live in table ``glove_mcp_active``, the learned tools (per server, shared by the
    file's conversations) in ``glove_mcp_learned_tools`` and the servers' instructions and
    listing times in ``glove_mcp_learned_servers`` (component ``glove_mcp.active_servers`` of
    glove_core's SQLite layer, version 3; a file of an older version is upgraded when it is
    opened, its learned tools kept), so the file can be
    the one a ``SqliteStore`` uses for the conversation. The layer gives it WAL mode, the
    shared busy timeout, versioned migrations and one connection, opened by the first call
    and used from worker threads only. Close with ``aclose()`` (or ``async with``).

    Args:
        path: the SQLite file (created when missing).
        conversation_id: the conversation whose active ids this adapter holds.
        tokens: bearer tokens per server id (a mapping, or a function id → token).
        busy_timeout: seconds a write waits for another writer before raising ``StoreError``.
        check_pages: run SQLite's ``quick_check`` when the connection opens (it reads the
            whole file: about 0.7 ms per MB). False only where this process has checked the
            file already, as the headless server does once for all its sessions.

    Raises:
        StoreCorruptError: (on first use) the file is not a SQLite database or is damaged.
        StoreVersionError: (on first use) the file has a newer version of the table.
    """

    schema: ClassVar[SqliteSchema] = _ACTIVE_SCHEMA
    """The active-servers table, as registered with glove_core's SQLite layer."""

    def __init__(
        self,
        path: str | Path,
        conversation_id: str,
        tokens: TokenMap | None = None,
        *,
        busy_timeout: float = SQLITE_BUSY_TIMEOUT,
        check_pages: bool = True,
    ) -> None:
        self.path = Path(path)
        self.conversation_id = conversation_id
        self._tokens = tokens
        message = f"SqliteMcpAdapter for {conversation_id!r} is closed; create a new one"
        self._db = SqliteDatabase(
            self.path,
            _ACTIVE_SCHEMA,
            busy_timeout=busy_timeout,
            closed_error=lambda: McpStateError(message),
            check_pages=check_pages,
        )

    @property
    def identifier(self) -> str:
        """The conversation id."""
        return self.conversation_id

    @property
    def busy_timeout(self) -> float:
        """Seconds a write waits for another connection's write."""
        return self._db.busy_timeout

    async def open(self) -> SqliteMcpAdapter:
        """Open the file now (otherwise the first call does), so a bad file fails early."""
        await self._db.open()
        return self

    async def get_active(self) -> list[str]:
        """The active ids, in activation order."""

        def read(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT server_id FROM glove_mcp_active WHERE conversation_id = ? ORDER BY seq",
                (self.conversation_id,),
            ).fetchall()
            return [row[0] for row in rows]

        return await self._db.read(read)

    async def activate(self, id: str) -> None:
        """Mark ``id`` active (idempotent; keeps its first activation position)."""
        now = datetime.now(UTC).isoformat()

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO glove_mcp_active "
                "(conversation_id, server_id, activated_at, seq) VALUES (?, ?, ?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM glove_mcp_active))",
                (self.conversation_id, id, now),
            )

        await self._db.write(write)

    async def deactivate(self, id: str) -> None:
        """Mark ``id`` inactive (idempotent)."""

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM glove_mcp_active WHERE conversation_id = ? AND server_id = ?",
                (self.conversation_id, id),
            )

        await self._db.write(write)

    async def get_access_token(self, id: str, *, fresh: bool = False) -> str | None:
        """The bearer token for server ``id`` from ``tokens``, or None; ``fresh=True`` (after
        a 401) asks a token source for a refreshed one."""
        return await _lookup(self._tokens, id, fresh)

    async def save_learned_tools(self, server_id: str, tools: Sequence[LearnedTool]) -> None:
        """Keep ``tools`` as what server ``server_id`` offers, for every conversation of the
        file (table ``glove_mcp_learned_tools``; ``LearnedToolsStore``). The server's kept
        listing (``get_learned_listings``) stays as it was.

        Raises:
            TypeError: an item is not a ``LearnedTool``.
        """
        await self._save(server_id, learned_tools(tools), None)

    async def save_learned_listing(
        self,
        server_id: str,
        tools: Sequence[LearnedTool],
        *,
        instructions: str | None = None,
        ttl_ms: int | None = None,
    ) -> None:
        """Keep ``tools``, the server's instructions and the listing's TTL for server
        ``server_id``, for every conversation of the file, in one transaction (tables
        ``glove_mcp_learned_tools`` and ``glove_mcp_learned_servers``;
        ``LearnedListingsStore``).

        Raises:
            TypeError: an item is not a ``LearnedTool``, or a bad ``instructions`` /
                ``ttl_ms`` type.
            ValueError: ``ttl_ms`` is negative.
        """
        kept = learned_tools(tools)
        listing = (learned_instructions(instructions), learned_ttl_ms(ttl_ms))
        await self._save(server_id, kept, listing)

    async def _save(
        self, server_id: str, kept: list[LearnedTool], listing: tuple[str, int | None] | None
    ) -> None:
        now = datetime.now(UTC)
        wanted = [(t.name, t.description) for t in kept]

        def read(conn: sqlite3.Connection) -> tuple[bool, bool]:
            rows = conn.execute(
                "SELECT name, description FROM glove_mcp_learned_tools WHERE server_id = ? "
                "ORDER BY position",
                (server_id,),
            ).fetchall()
            same_tools = [(str(n), str(d)) for n, d in rows] == wanted
            if listing is None:
                return same_tools, True
            row = conn.execute(
                "SELECT instructions, listed_at, ttl_ms FROM glove_mcp_learned_servers "
                "WHERE server_id = ?",
                (server_id,),
            ).fetchone()
            kept_listing = None if row is None else LearnedListing.from_row(*row)
            return same_tools, kept_listing is not None and kept_listing.unchanged_by(*listing, now)

        # Every session that opens the server saves its listing: unchanged (the usual case),
        # it costs a read, not a write that would queue behind every other writer of the file.
        same_tools, same_listing = await self._db.read(read)
        if same_tools and same_listing:
            return

        def write(conn: sqlite3.Connection) -> None:
            if not same_tools:
                conn.execute(
                    "DELETE FROM glove_mcp_learned_tools WHERE server_id = ?", (server_id,)
                )
                conn.executemany(
                    "INSERT INTO glove_mcp_learned_tools "
                    "(server_id, position, name, description, learned_at) VALUES (?, ?, ?, ?, ?)",
                    [
                        (server_id, i, t.name, t.description, now.isoformat())
                        for i, t in enumerate(kept)
                    ],
                )
            if listing is not None:
                conn.execute(
                    "INSERT INTO glove_mcp_learned_servers "
                    "(server_id, instructions, listed_at, ttl_ms) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (server_id) DO UPDATE SET instructions = excluded.instructions, "
                    "listed_at = excluded.listed_at, ttl_ms = excluded.ttl_ms",
                    (server_id, listing[0], now.isoformat(), listing[1]),
                )

        await self._db.write(write)

    async def get_learned_tools(self) -> dict[str, list[LearnedTool]]:
        """Every server's kept tools, as saved by any conversation of the file."""

        def read(conn: sqlite3.Connection) -> dict[str, list[LearnedTool]]:
            rows = conn.execute(
                "SELECT server_id, name, description FROM glove_mcp_learned_tools "
                "ORDER BY server_id, position"
            ).fetchall()
            out: dict[str, list[LearnedTool]] = {}
            for server_id, name, description in rows:
                out.setdefault(server_id, []).append(LearnedTool(name, description))
            return out

        return await self._db.read(read)

    async def get_learned_listings(self) -> dict[str, LearnedListing]:
        """Every server's kept listing, as saved by any conversation of the file
        (``LearnedListingsStore``)."""

        def read(conn: sqlite3.Connection) -> dict[str, LearnedListing]:
            rows = conn.execute(
                "SELECT server_id, instructions, listed_at, ttl_ms FROM glove_mcp_learned_servers"
            ).fetchall()
            return {str(row[0]): LearnedListing.from_row(*row[1:]) for row in rows}

        return await self._db.read(read)

    async def aclose(self) -> None:
        """Close the database connection (idempotent); later calls raise ``McpStateError``."""
        await self._db.aclose()

    async def _enter(self) -> None:
        await self.open()

    def __repr__(self) -> str:
        return f"SqliteMcpAdapter({str(self.path)!r}, {self.conversation_id!r})"
