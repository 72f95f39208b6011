"""PostgresMcpAdapter: a conversation's active MCP servers in PostgreSQL (several instances).

The same contract as ``SqliteMcpAdapter`` — ids in activation order, idempotent activate and
deactivate, credentials from ``tokens`` — in table ``glove_mcp_active`` (component
``glove_mcp.active_servers``) of the PostgreSQL layer, so a conversation reopened on any
instance reloads the servers it had activated. It is a ``LearnedListingsStore`` too: the tools
a server listed are kept per server id in ``glove_mcp_learned_tools``, and its instructions and
the listing's time and TTL in ``glove_mcp_learned_servers``, shared by every conversation of the
database, as ``SqliteMcpAdapter`` keeps them per file. Needs the ``postgres`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema
from glove_core.resources import AsyncResource
from glove_mcp.adapter import (
    LEARNED_SERVERS_TABLE,
    LEARNED_TOOLS_TABLE,
    LearnedListing,
    LearnedTool,
    MemoryMcpAdapter,
    TokenMap,
    learned_instructions,
    learned_tools,
    learned_ttl_ms,
)

__all__ = ["PostgresMcpAdapter"]

_ACTIVE_SCHEMA = PostgresSchema(
    name="glove_mcp.active_servers",
    migrations=(
        (
            """CREATE TABLE glove_mcp_active (
    conversation_id TEXT NOT NULL,
    server_id TEXT NOT NULL,
    activated_at TEXT NOT NULL,
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (conversation_id, server_id)
)""",
        ),
        # Learned tools: per server id, shared by every conversation of the database.
        (LEARNED_TOOLS_TABLE,),
        # The servers' instructions and the listings' time and TTL, beside their tools.
        (LEARNED_SERVERS_TABLE,),
    ),
)


class PostgresMcpAdapter(AsyncResource):
    """An ``McpAdapter`` keeping active ids per conversation in PostgreSQL.

    Args:
        database: the process's ``PostgresDatabase`` (owned by the caller).
        conversation_id: the conversation whose active ids this adapter holds.
        tokens: bearer tokens per server id (a mapping, or a function id → token).
    """

    schema: ClassVar[PostgresSchema] = _ACTIVE_SCHEMA
    """The active-servers table, as registered with glove_core's PostgreSQL layer."""

    def __init__(
        self, database: PostgresDatabase, conversation_id: str, tokens: TokenMap | None = None
    ) -> None:
        self._db = database
        self.conversation_id = conversation_id
        # The token lookup is the memory adapter's; only the active ids live in the database.
        self._credentials = MemoryMcpAdapter(conversation_id, tokens=tokens)

    @property
    def identifier(self) -> str:
        """The conversation id."""
        return self.conversation_id

    async def open(self) -> PostgresMcpAdapter:
        """Migrate the table now (otherwise the first call does)."""
        await self._db.migrate(_ACTIVE_SCHEMA)
        return self

    async def aclose(self) -> None:
        """Nothing to close: the database belongs to its owner."""

    async def _enter(self) -> None:
        await self.open()

    async def get_active(self) -> list[str]:
        """The active ids, in activation order."""

        async def read(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                "SELECT server_id FROM glove_mcp_active WHERE conversation_id = %s ORDER BY seq",
                (self.conversation_id,),
            )
            return await cursor.fetchall()

        await self.open()
        return [str(row[0]) for row in await self._db.read(read)]

    async def activate(self, id: str) -> None:
        """Mark ``id`` active (idempotent; keeps its first activation position)."""
        now = datetime.now(UTC).isoformat()

        async def write(conn: Connection) -> None:
            await conn.execute(
                "INSERT INTO glove_mcp_active (conversation_id, server_id, activated_at) "
                "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (self.conversation_id, id, now),
            )

        await self.open()
        await self._db.write(write)

    async def deactivate(self, id: str) -> None:
        """Mark ``id`` inactive (idempotent)."""

        async def write(conn: Connection) -> None:
            await conn.execute(
                "DELETE FROM glove_mcp_active WHERE conversation_id = %s AND server_id = %s",
                (self.conversation_id, id),
            )

        await self.open()
        await self._db.write(write)

    async def get_access_token(self, id: str, *, fresh: bool = False) -> str | None:
        """The bearer token for server ``id`` from ``tokens``, or None; ``fresh=True`` (after
        a 401) asks a token source for a refreshed one."""
        return await self._credentials.get_access_token(id, fresh=fresh)

    async def save_learned_tools(self, server_id: str, tools: Sequence[LearnedTool]) -> None:
        """Keep ``tools`` as what server ``server_id`` offers, for every conversation of the
        database, replacing what was kept in one transaction (``LearnedToolsStore``). The
        server's kept listing (``get_learned_listings``) stays as it was.

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
        ``server_id``, for every conversation of the database, in one transaction
        (``LearnedListingsStore``).

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

        async def read(conn: Connection) -> tuple[bool, bool]:
            cursor = await conn.execute(
                "SELECT name, description FROM glove_mcp_learned_tools WHERE server_id = %s "
                "ORDER BY position",
                (server_id,),
            )
            same_tools = [(str(n), str(d)) for n, d in await cursor.fetchall()] == wanted
            if listing is None:
                return same_tools, True
            cursor = await conn.execute(
                "SELECT instructions, listed_at, ttl_ms FROM glove_mcp_learned_servers "
                "WHERE server_id = %s",
                (server_id,),
            )
            row = await cursor.fetchone()
            kept_listing = None if row is None else LearnedListing.from_row(*row)
            return same_tools, kept_listing is not None and kept_listing.unchanged_by(*listing, now)

        await self.open()
        # Unchanged (every session that opens the server saves its listing): one read.
        same_tools, same_listing = await self._db.read(read)
        if same_tools and same_listing:
            return

        async def write(conn: Connection) -> None:
            if not same_tools:
                await conn.execute(
                    "DELETE FROM glove_mcp_learned_tools WHERE server_id = %s", (server_id,)
                )
                async with conn.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO glove_mcp_learned_tools "
                        "(server_id, position, name, description, learned_at) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        [
                            (server_id, i, t.name, t.description, now.isoformat())
                            for i, t in enumerate(kept)
                        ],
                    )
            if listing is not None:
                await conn.execute(
                    "INSERT INTO glove_mcp_learned_servers "
                    "(server_id, instructions, listed_at, ttl_ms) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (server_id) DO UPDATE SET instructions = EXCLUDED.instructions, "
                    "listed_at = EXCLUDED.listed_at, ttl_ms = EXCLUDED.ttl_ms",
                    (server_id, listing[0], now.isoformat(), listing[1]),
                )

        await self._db.write(write)

    async def get_learned_tools(self) -> dict[str, list[LearnedTool]]:
        """Every server's kept tools, as saved by any conversation of the database."""

        async def read(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                "SELECT server_id, name, description FROM glove_mcp_learned_tools "
                "ORDER BY server_id, position"
            )
            return await cursor.fetchall()

        await self.open()
        out: dict[str, list[LearnedTool]] = {}
        for server_id, name, description in await self._db.read(read):
            out.setdefault(str(server_id), []).append(LearnedTool(str(name), str(description)))
        return out

    async def get_learned_listings(self) -> dict[str, LearnedListing]:
        """Every server's kept listing, as saved by any conversation of the database
        (``LearnedListingsStore``)."""

        async def read(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                "SELECT server_id, instructions, listed_at, ttl_ms FROM glove_mcp_learned_servers"
            )
            return await cursor.fetchall()

        await self.open()
        return {str(row[0]): LearnedListing.from_row(*row[1:]) for row in await self._db.read(read)}

    def __repr__(self) -> str:
        return f"PostgresMcpAdapter({self._db.name!r}, {self.conversation_id!r})"
