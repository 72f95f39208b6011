"""PostgresOAuthStore: OAuth client registrations and tokens in PostgreSQL, for several machines.

Each key's state is one row of ``glove_mcp_oauth`` (component ``glove_mcp.oauth`` of
glove_core's PostgreSQL layer), with the server URL and the authorization server's issuer it
belongs to in columns of their own, so tokens are found by server and issuer and a state from
one authorization server is never taken for another's. ``lock(key)`` is a session-level
advisory lock on a connection of its own: ``OAuthTokenSource`` holds it around a refresh, so
instances on any number of machines spend one refresh token once (single flight), and a
holder that dies releases it.

The database holds the secrets in clear, like the file store's 0600 file: give the table to
the server's database user only. Needs the ``postgres`` extra.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

from pydantic import ValidationError

from glove_core.abort import AbortSignal
from glove_core.errors import ConversationLockedError
from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema
from glove_mcp.errors import OAuthStoreCorruptError
from glove_mcp.oauth.state import OAuthState, state_from_json, state_to_json

__all__ = ["PostgresOAuthStore"]

_OAUTH_SCHEMA = PostgresSchema(
    name="glove_mcp.oauth",
    migrations=(
        (
            """CREATE TABLE glove_mcp_oauth (
    key TEXT PRIMARY KEY,
    server_url TEXT,
    issuer TEXT,
    state TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
)""",
            "CREATE INDEX glove_mcp_oauth_by_server ON glove_mcp_oauth (server_url, issuer)",
        ),
    ),
)


class PostgresOAuthStore:
    """A ``LockingOAuthStore`` in PostgreSQL, shared by every instance.

    Args:
        database: the process's ``PostgresDatabase`` (owned by the caller).
    """

    schema: ClassVar[PostgresSchema] = _OAUTH_SCHEMA
    """The OAuth table, as registered with glove_core's PostgreSQL layer."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def __repr__(self) -> str:
        return f"PostgresOAuthStore({self._db.name!r})"

    async def get(self, key: str) -> OAuthState | None:
        """The state stored for ``key``, or ``None``.

        Raises:
            OAuthStoreCorruptError: the row is not a valid OAuth state.
        """

        async def read(conn: Connection) -> Any:
            cursor = await conn.execute("SELECT state FROM glove_mcp_oauth WHERE key = %s", (key,))
            return await cursor.fetchone()

        row = await self._call(read)
        if row is None:
            return None
        try:
            return state_from_json(json.loads(str(row[0])))
        except (ValidationError, json.JSONDecodeError):
            raise OAuthStoreCorruptError(
                f"{self._db.name} table glove_mcp_oauth", f"entry {key!r} is not a valid state"
            ) from None

    async def find(self, server_url: str, issuer: str | None) -> list[str]:
        """The keys holding state for ``server_url`` issued by ``issuer`` (None: any)."""

        async def read(conn: Connection) -> list[Any]:
            cursor = await conn.execute(
                "SELECT key FROM glove_mcp_oauth WHERE server_url = %s "
                "AND (%s::text IS NULL OR issuer = %s) ORDER BY key",
                (server_url, issuer, issuer),
            )
            return await cursor.fetchall()

        return [str(row[0]) for row in await self._call(read)]

    async def set(self, key: str, state: OAuthState) -> None:
        """Replace the state stored for ``key`` (one statement)."""
        data = json.dumps(state_to_json(state))

        async def write(conn: Connection) -> None:
            await conn.execute(
                "INSERT INTO glove_mcp_oauth (key, server_url, issuer, state) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET "
                "server_url = excluded.server_url, issuer = excluded.issuer, "
                "state = excluded.state, updated_at = now()",
                (key, state.server_url, state.issuer, data),
            )

        await self._call(write, write=True)

    async def delete(self, key: str) -> None:
        """Forget ``key``."""

        async def write(conn: Connection) -> None:
            await conn.execute("DELETE FROM glove_mcp_oauth WHERE key = %s", (key,))

        await self._call(write, write=True)

    async def clear(self) -> None:
        """Forget every key."""

        async def write(conn: Connection) -> None:
            await conn.execute("DELETE FROM glove_mcp_oauth")

        await self._call(write, write=True)

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        """Hold ``key``'s exclusive lock, across every process and machine on the database."""
        name = f"glove.oauth:{key}"
        async with self._db.lock(
            name,
            AbortSignal(),
            None,
            lambda waited: ConversationLockedError(key, name, waited),
        ):
            yield

    async def _call(self, fn: Any, *, write: bool = False) -> Any:
        await self._db.migrate(_OAUTH_SCHEMA)
        return await (self._db.write(fn) if write else self._db.read(fn))
