"""The PostgreSQL layer: migrations by instances starting at once, newer tables refused, a
server that cannot be reached, bad settings — each with a clear error that loses nothing."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

import asyncio
from typing import Any

import pytest

from glove_core import Message
from glove_core.errors import GloveStateError, StoreError, StoreVersionError
from glove_core.postgres import Connection, PostgresDatabase, PostgresSchema, redact_url
from glove_core.stores.postgres import PostgresStore


async def schema_rows(db: PostgresDatabase) -> list[Any]:
    async def read(conn: Connection) -> list[Any]:
        cursor = await conn.execute("SELECT component, version FROM glove_store_schema")
        return await cursor.fetchall()

    return await db.read(read)


async def test_instances_starting_at_once_migrate_one_after_another(postgres_url: str) -> None:
    databases = [PostgresDatabase(postgres_url, min_size=0) for _ in range(5)]
    try:
        await asyncio.gather(*(db.migrate(PostgresStore.schema) for db in databases))
        stores = [PostgresStore(db, "c") for db in databases]
        await asyncio.gather(
            *(
                s.append_messages([Message(sender="user", text=str(n))])
                for n, s in enumerate(stores)
            )
        )
        assert len(await stores[0].get_messages()) == 5
        assert await schema_rows(databases[0]) == [("glove_core.conversations", 1)]
    finally:
        for db in databases:
            await db.aclose()


async def test_newer_tables_are_refused_and_left_as_they_are(postgres_url: str) -> None:
    async with PostgresDatabase(postgres_url) as db:
        await PostgresStore(db, "c").append_messages([Message(sender="user", text="kept")])

        async def bump(conn: Connection) -> None:
            await conn.execute("UPDATE glove_store_schema SET version = 9")

        await db.write(bump)
    async with PostgresDatabase(postgres_url) as newer:
        with pytest.raises(StoreVersionError, match="schema version 9") as info:
            await PostgresStore(newer, "c").get_messages()
        assert "glove_core.conversations" in str(info.value.__notes__)
        assert await schema_rows(newer) == [("glove_core.conversations", 9)]


async def test_an_unreachable_server_is_named_without_its_password() -> None:
    url = "postgresql://glove:s3cret@127.0.0.1:9/glove?connect_timeout=1"
    db = PostgresDatabase(url, timeout=1)
    with pytest.raises(StoreError, match="did not answer within 1 s") as info:
        await db.open()
    assert "s3cret" not in str(info.value) and "glove:***@" in str(info.value)
    with pytest.raises(GloveStateError, match="is closed"):
        await db.open()
    assert redact_url("postgresql://u@h/d?password=x&a=b") == "postgresql://u@h/d?password=***&a=b"


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="max_size must be 1 or more and at least min_size"):
        PostgresDatabase("postgresql://h/d", min_size=5, max_size=2)
    with pytest.raises(ValueError, match="timeout must be more than 0"):
        PostgresDatabase("postgresql://h/d", timeout=0)
    with pytest.raises(ValueError, match="max_locks must be 1 or more"):
        PostgresDatabase("postgresql://h/d", max_locks=0)
    with pytest.raises(ValueError, match="migration 1 must be a non-empty tuple"):
        PostgresSchema("x", (("",),))
