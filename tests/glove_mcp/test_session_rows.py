"""The session list ``GET /sessions`` pages through: each session's title (the start of the
first message a person sent) and its times, the same on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from glove_core import Message, ToolCall, ToolResult, ToolResultData
from glove_mcp.server import HeadlessServer
from glove_mcp.server._session_rows import TITLE_CHARS, title_of
from glove_mcp.server.session_storage import SqliteSessionStorage
from tests._postgres import require_postgres_driver
from tests.glove_mcp.server._harness import KEY, running, simple_factory


@pytest.fixture(params=["sqlite", "postgres"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A session storage of the server, on a SQLite file or a PostgreSQL database."""
    if request.param == "sqlite":
        yield SqliteSessionStorage(str(tmp_path / "server.db"))
        return
    require_postgres_driver()
    from glove_core.postgres import PostgresDatabase
    from glove_mcp.server._postgres_sessions import PostgresSessionStorage

    made = PostgresSessionStorage(PostgresDatabase(request.getfixturevalue("postgres_url")))
    await made.open()
    try:
        yield made
    finally:
        await made.aclose()


async def _save(storage: Any, session_id: str, messages: list[Message]) -> None:
    store = await storage.claim(session_id, "default")
    assert store is not None
    try:
        await store.append_messages(messages)
    finally:
        await store.aclose()


async def test_a_session_is_titled_by_the_first_message_a_person_sent(storage: Any) -> None:
    call = ToolCall(id="c1", name="notes__read", input={})
    result = ToolResult(call_id="c1", name="notes__read", result=ToolResultData(data="x"))
    await _save(
        storage,
        "a",
        [
            # Written by the framework, not typed: never the title.
            Message(sender="user", text="<event>build 7 passed</event>", framework_context="event"),
            Message(sender="user", text="   What is\n open   in the tracker?  "),
            Message(sender="agent", text="Let me look.", tool_calls=[call]),
            Message(sender="user", tool_results=[result]),
            Message(sender="user", text="And the notes?"),
        ],
    )
    await _save(storage, "b", [Message(sender="user", text="word " * 40)])
    await _save(storage, "c", [])  # a session with nothing said yet
    await _save(storage, "d", [Message(sender="user", tool_results=[result])])
    rows = {row.id: row for row in await storage.list_page(None, 10)}
    assert rows["a"].title == "What is open in the tracker?"
    long = rows["b"].title
    assert long is not None and len(long) == TITLE_CHARS and long.endswith("…")
    assert long.startswith("word word") and "  " not in long
    assert rows["c"].title is None and rows["d"].title is None
    for row in rows.values():
        assert row.created_at <= row.updated_at


def test_titles_fold_whitespace_and_are_cut() -> None:
    assert title_of(None) is None and title_of(" \n\t") is None
    assert title_of("a\n\nb") == "a b"
    assert title_of("x" * TITLE_CHARS) == "x" * TITLE_CHARS
    assert title_of("x" * (TITLE_CHARS + 1)) == "x" * (TITLE_CHARS - 1) + "…"


async def test_the_listing_returns_titles_beside_the_fields_it_had(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        await client.post("/sessions", json={"id": "quiet"})
        await client.post("/sessions", json={"id": "talked"})
        await client.post("/sessions/talked/messages", json={"text": "Deploy build 7, please"})
        sessions = (await client.get("/sessions")).json()["sessions"]
        assert [s["id"] for s in sessions] == ["quiet", "talked"]
        quiet, talked = sessions
        # Backward compatible: the fields a client already reads are all still there.
        assert set(talked) == {"id", "created_at", "updated_at", "messages", "owner", "title"}
        assert talked["title"] == "Deploy build 7, please" and talked["messages"] == 2
        assert quiet["title"] is None and quiet["messages"] == 0
