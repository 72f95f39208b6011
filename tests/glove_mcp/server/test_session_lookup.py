"""Issue 16, item 15: every ``POST /sessions`` counted all messages of all sessions.

It listed every session with its message count to check one id: 17.6 / 74.9 / 397.6 ms per
call at 1k / 5k / 20k sessions. Now creation and lookup are one primary-key statement each
(``SqliteStore.create_session`` / ``session_exists``), whatever the number of sessions. The
figures are in ``bench/server_limits.py``; this test checks what makes them flat: SQLite's
plan for the two statements touches one ``glove_sessions`` row by its key and never reads
``glove_messages``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from glove_core import Message, SqliteStore
from glove_core.stores._sqlite_sessions import CREATE_SESSION_SQL, SESSION_EXISTS_SQL
from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import KEY, running, simple_factory

EXISTING = 2000


def tables_opened(conn: sqlite3.Connection, sql: str, params: tuple[str, ...]) -> set[str]:
    """The tables and indexes a statement's bytecode opens (``OpenRead`` / ``OpenWrite``)."""
    pages = dict(conn.execute("SELECT rootpage, name FROM sqlite_master").fetchall())
    program = conn.execute(f"EXPLAIN {sql}", params).fetchall()
    return {pages[row[3]] for row in program if row[1] in ("OpenRead", "OpenWrite")}


async def make_sessions(path: Path) -> None:
    async with SqliteStore(path, "seed") as store:
        await store.append_messages([Message(sender="user", text="hello")])
    conn = sqlite3.connect(path)
    with conn:  # many sessions, each with messages, written in one go
        conn.executemany(
            "INSERT INTO glove_sessions (session_id, created_at, updated_at) VALUES (?, '', '')",
            [(f"old{i}",) for i in range(EXISTING)],
        )
        conn.executemany(
            "INSERT INTO glove_messages (session_id, message_id, sender, is_compaction, data) "
            "SELECT ?, 'm', sender, is_compaction, data FROM glove_messages "
            "WHERE session_id = 'seed'",
            [(f"old{i}",) for i in range(0, EXISTING, 2)],
        )
    conn.close()


async def test_create_and_lookup_touch_one_session_row(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await make_sessions(path)
    conn = sqlite3.connect(path)
    try:
        for sql, params in ((CREATE_SESSION_SQL, ("x", "t", "t")), (SESSION_EXISTS_SQL, ("x",))):
            opened = tables_opened(conn, sql, params)
            assert not any(name.startswith("glove_messages") for name in opened), (sql, opened)
            assert opened <= {"glove_sessions", "sqlite_autoindex_glove_sessions_1"}, opened
        rows = conn.execute(f"EXPLAIN QUERY PLAN {SESSION_EXISTS_SQL}", ("x",)).fetchall()
        plan = " ".join(r[3] for r in rows)
        assert plan.startswith("SEARCH glove_sessions USING") and "(session_id=?)" in plan, plan
    finally:
        conn.close()


async def test_the_server_creates_and_finds_sessions_among_many(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await make_sessions(path)
    server = HeadlessServer(str(path), KEY, simple_factory())
    async with running(server) as client:
        assert (await client.post("/sessions", json={"id": "new"})).status_code == 201
        assert (await client.post("/sessions", json={"id": "old7"})).status_code == 409
        assert (await client.get("/sessions/old8")).json()["messages"][0]["text"] == "hello"
        assert (await client.get("/sessions/never")).status_code == 404
    async with SqliteStore(path, "old9") as store:
        assert await store.session_exists() and not await store.create_session()
    async with SqliteStore(path, "brand-new") as store:
        assert not await store.session_exists()
        assert await store.create_session() and await store.session_exists()
