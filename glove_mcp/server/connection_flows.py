"""Authorizations in progress, kept in the server's database (internal).

``POST /connections/{id}`` records a flow (its principal, server, PKCE verifier, client and
endpoints) under a hash of its ``state``; ``GET /oauth/callback`` takes it back exactly once
(a delete that returns the row), on any instance sharing the database. Flows expire after
ten minutes; expired rows are purged as new flows are recorded. The state itself is never
stored, only its SHA-256, so a copy of the table cannot complete a flow; the verifier is
stored as the token store stores tokens (give the table to the server's user only).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from glove_core.sqlite import SqliteDatabase, SqliteSchema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from glove_core.postgres import Connection, PostgresDatabase

__all__ = ["FLOW_TTL", "FlowStore", "PendingFlow", "PostgresFlows", "SqliteFlows", "flow_store"]

FLOW_TTL = 600.0
"""Seconds an authorization may take from ``POST /connections/{id}`` to its callback."""

_TABLE = """CREATE TABLE glove_mcp_oauth_flows (
    state_sha256 TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    server_id TEXT NOT NULL,
    server_url TEXT NOT NULL,
    flow TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
)"""
_INDEX = "CREATE INDEX glove_mcp_oauth_flows_expiry ON glove_mcp_oauth_flows (expires_at)"

_SQLITE_SCHEMA = SqliteSchema(name="glove_mcp.oauth_flows", migrations=((_TABLE, _INDEX),))


@dataclass(frozen=True)
class PendingFlow:
    """One authorization waiting for its callback.

    Attributes:
        principal: who started it (the tokens will be theirs).
        server_id: the catalogue id.
        server_url: the server URL the tokens are for.
        expires_at: Unix time after which the callback is refused.
        data: the verifier, client, endpoints, issuer and resource (secrets: never shown).
    """

    principal: str
    server_id: str
    server_url: str
    expires_at: float
    data: dict[str, Any] = field(repr=False)


def state_digest(state: str) -> str:
    """The key a flow is stored under: the SHA-256 of its state."""
    return hashlib.sha256(state.encode("utf-8", "surrogatepass")).hexdigest()


class FlowStore(Protocol):
    """Where flows wait: the server's SQLite file or PostgreSQL database."""

    async def put(self, state: str, flow: PendingFlow) -> None:
        """Record ``flow`` under ``state`` (and drop expired flows)."""
        ...

    async def take(self, state: str) -> PendingFlow | None:
        """The flow of ``state``, removed (single use); ``None`` if unknown or already
        taken. An expired flow is returned (and removed): the caller says so."""
        ...

    async def count(self) -> int:
        """How many flows wait (expired ones included until purged)."""
        ...

    async def aclose(self) -> None:
        """Close what this store opened."""
        ...


def _row(flow: PendingFlow) -> tuple[str, str, str, str, float]:
    return (
        flow.principal,
        flow.server_id,
        flow.server_url,
        json.dumps(flow.data),
        flow.expires_at,
    )


def _flow(row: Any) -> PendingFlow:
    return PendingFlow(str(row[0]), str(row[1]), str(row[2]), float(row[4]), json.loads(row[3]))


class SqliteFlows:
    """Flows in the server's SQLite file (one instance, or several on one machine)."""

    def __init__(self, path: str) -> None:
        self._db = SqliteDatabase(path, _SQLITE_SCHEMA, owner="the OAuth flow table")

    async def put(self, state: str, flow: PendingFlow) -> None:
        """Record ``flow`` under ``state``."""
        key, values = state_digest(state), _row(flow)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM glove_mcp_oauth_flows WHERE expires_at < ?", (time.time(),))
            conn.execute(
                "INSERT INTO glove_mcp_oauth_flows (state_sha256, principal, server_id, "
                "server_url, flow, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (key, *values),
            )

        await self._db.write(write)

    async def take(self, state: str) -> PendingFlow | None:
        """The flow of ``state``, removed."""
        key = state_digest(state)

        def write(conn: sqlite3.Connection) -> Any:
            cursor = conn.execute(
                "DELETE FROM glove_mcp_oauth_flows WHERE state_sha256 = ? RETURNING "
                "principal, server_id, server_url, flow, expires_at",
                (key,),
            )
            return cursor.fetchone()

        row = await self._db.write(write)
        return None if row is None else _flow(row)

    async def count(self) -> int:
        """How many flows wait."""

        def read(conn: sqlite3.Connection) -> int:
            return int(conn.execute("SELECT count(*) FROM glove_mcp_oauth_flows").fetchone()[0])

        return await self._db.read(read)

    async def aclose(self) -> None:
        """Close the file."""
        await self._db.aclose()


class PostgresFlows:
    """Flows in the PostgreSQL database every instance shares: a callback may land on any."""

    def __init__(self, database: PostgresDatabase) -> None:
        # Imported here: a server on SQLite needs no PostgreSQL driver.
        from glove_core.postgres import PostgresSchema

        self._db = database
        self.schema = PostgresSchema(name="glove_mcp.oauth_flows", migrations=((_TABLE, _INDEX),))

    async def put(self, state: str, flow: PendingFlow) -> None:
        """Record ``flow`` under ``state``."""
        key, values = state_digest(state), _row(flow)

        async def write(conn: Connection) -> None:
            await conn.execute(
                "DELETE FROM glove_mcp_oauth_flows WHERE expires_at < %s", (time.time(),)
            )
            await conn.execute(
                "INSERT INTO glove_mcp_oauth_flows (state_sha256, principal, server_id, "
                "server_url, flow, expires_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (key, *values),
            )

        await self._db.migrate(self.schema)
        await self._db.write(write)

    async def take(self, state: str) -> PendingFlow | None:
        """The flow of ``state``, removed (one instance wins a race: the delete returns it)."""
        key = state_digest(state)

        async def write(conn: Connection) -> Any:
            cursor = await conn.execute(
                "DELETE FROM glove_mcp_oauth_flows WHERE state_sha256 = %s RETURNING "
                "principal, server_id, server_url, flow, expires_at",
                (key,),
            )
            return await cursor.fetchone()

        await self._db.migrate(self.schema)
        row = await self._db.write(write)
        return None if row is None else _flow(row)

    async def count(self) -> int:
        """How many flows wait."""

        async def read(conn: Connection) -> int:
            cursor = await conn.execute("SELECT count(*) FROM glove_mcp_oauth_flows")
            row = await cursor.fetchone()
            return int(str(row[0])) if row else 0

        await self._db.migrate(self.schema)
        return await self._db.read(read)

    async def aclose(self) -> None:
        """Nothing: the database belongs to the server."""


def flow_store(db_path: str | None, database: PostgresDatabase | None) -> FlowStore:
    """The flow table of the server's database: PostgreSQL when it has one, else its file."""
    if database is not None:
        return PostgresFlows(database)
    assert db_path is not None
    return SqliteFlows(db_path)
