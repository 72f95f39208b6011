"""SqliteStore on real files: round trips, counters, capabilities, bad files, outside helpers.

The tests taking ``store`` or ``backend`` run twice: on a SQLite file and on PostgreSQL
(``PostgresStore``), which must behave the same.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glove_core import (
    DocumentPart,
    ImagePart,
    InboxItem,
    Message,
    SqliteStore,
    Task,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultData,
    Usage,
)
from glove_core.errors import (
    GloveStateError,
    InboxItemError,
    StoreCorruptError,
    StoreError,
    StoreNotFoundError,
    StoreVersionError,
)
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT
from glove_core.stores import InboxStore, PermissionStore, StoreAdapter, TaskStore
from glove_core.stores.sqlite import SCHEMA_VERSION
from tests._backends import Backend
from tests.fixtures.legacy_sqlite import legacy_file


@pytest.fixture
async def store(backend: Backend) -> Any:
    return await backend.store("s1")


def full_message() -> Message:
    """A message with every field set to something other than its default."""
    return Message(
        sender="user",
        text="see attached",
        content=[
            TextPart(text="see attached"),
            ImagePart(media_type="image/png", data="aGVsbG8="),
            DocumentPart(media_type="application/pdf", url="https://example.com/a.pdf", title="A"),
        ],
        tool_calls=[ToolCall(id="c1", name="search", input={"q": "x", "n": [1, 2.5, None]})],
        tool_results=[
            ToolResult(
                call_id="c1",
                name="search",
                result=ToolResultData(
                    status="error",
                    data={"rows": [1, 2]},
                    message="partial",
                    render_data={"ui": True},
                    content=[ImagePart(media_type="image/jpeg", url="https://example.com/i.jpg")],
                ),
            )
        ],
        is_compaction=True,
        framework_context="inbox",
    )


async def test_implements_the_store_protocols(store: SqliteStore) -> None:
    assert isinstance(store, StoreAdapter)
    assert isinstance(store, TaskStore)
    assert isinstance(store, PermissionStore)
    assert isinstance(store, InboxStore)
    assert store.identifier == "s1"


async def test_every_message_field_round_trips(store: SqliteStore, backend: Backend) -> None:
    messages = [full_message(), Message(sender="agent", text="ok")]
    await store.append_messages(messages)
    assert await store.get_messages() == messages
    # Another store object on the same database (a restart) reads the same.
    again = await backend.store("s1", fresh=True)
    loaded = await again.get_messages()
    assert loaded == messages
    assert loaded[0].is_compaction is True
    assert loaded[0].framework_context == "inbox"


async def test_sessions_are_separate_and_empty_until_written(backend: Backend) -> None:
    a, b = await backend.store("a"), await backend.store("b")
    await a.append_messages([Message(sender="user", text="for a")])
    assert await b.get_messages() == []
    assert await b.get_usage() == Usage()
    assert await b.get_turn_count() == 0
    assert await b.get_tasks() == []
    assert [m.text for m in await a.get_messages()] == ["for a"]


async def test_append_is_all_or_nothing(store: SqliteStore) -> None:
    await store.append_messages([Message(sender="user", text="kept")])

    class Boom(Message):
        def model_dump_json(self, **kwargs: Any) -> str:
            raise RuntimeError("cannot serialise")

    with pytest.raises(RuntimeError, match="cannot serialise"):
        await store.append_messages(
            [Message(sender="agent", text="would be lost"), Boom(sender="agent")]
        )
    assert [m.text for m in await store.get_messages()] == ["kept"]
    await store.append_messages([])
    assert len(await store.get_messages()) == 1


async def test_counters(store: SqliteStore) -> None:
    await store.add_usage(Usage(input_tokens=10, output_tokens=2, cache_read_tokens=3))
    await store.add_usage(Usage(input_tokens=1, cache_write_tokens=4))
    await store.increment_turn()
    await store.increment_turn()
    assert await store.get_usage() == Usage(
        input_tokens=11, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4
    )
    assert await store.get_turn_count() == 2
    await store.reset_counters()
    assert await store.get_usage() == Usage()
    assert await store.get_turn_count() == 0


async def test_tasks_and_permissions(store: SqliteStore) -> None:
    tasks = [Task(id="t1", content="read"), Task(id="t2", content="write", status="in_progress")]
    await store.set_tasks(tasks)
    assert await store.get_tasks() == tasks
    await store.set_tasks([])
    assert await store.get_tasks() == []

    assert await store.get_permission("rm", '{"path":"/"}') is None
    await store.set_permission("rm", '{"path":"/"}', "denied")
    await store.set_permission("ls", "{}", "granted")
    assert await store.get_permission("rm", '{"path":"/"}') == "denied"
    await store.set_permission("rm", '{"path":"/"}', "granted")
    assert await store.get_permission("rm", '{"path":"/"}') == "granted"
    assert await store.get_permission("rm", "{}") is None
    with pytest.raises(ValueError, match="'granted' or 'denied'"):
        await store.set_permission("rm", "{}", "maybe")  # type: ignore[arg-type]


def item(item_id: str, *, blocking: bool = False) -> InboxItem:
    return InboxItem(
        id=item_id, tag="watch", request="tell me", blocking=blocking, created_at="2026-01-01"
    )


async def test_inbox_items(store: SqliteStore) -> None:
    await store.add_inbox_item(item("i1"))
    await store.add_inbox_item(item("i2", blocking=True))
    with pytest.raises(InboxItemError, match="'i1': already exists in conversation 's1'"):
        await store.add_inbox_item(item("i1"))
    assert [i.id for i in await store.get_inbox_items()] == ["i1", "i2"]
    assert await store.get_resolved_inbox_items() == []

    await store.update_inbox_item("i2", status="resolved", response="done", resolved_at="now")
    resolved = await store.get_resolved_inbox_items()
    assert [(i.id, i.response, i.resolved_at, i.blocking) for i in resolved] == [
        ("i2", "done", "now", True)
    ]
    await store.update_inbox_item("i2", status="consumed")
    assert await store.get_resolved_inbox_items() == []
    assert (await store.get_inbox_items())[1].response == "done"
    with pytest.raises(InboxItemError, match="'nope': no such item in conversation 's1'"):
        await store.update_inbox_item("nope", status="consumed")


async def test_list_sessions_and_resolve_from_outside(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    async with SqliteStore(path, "a") as a, SqliteStore(path, "b") as b:
        await a.append_messages([Message(sender="user", text="1"), Message(sender="agent")])
        await a.add_inbox_item(item("shared"))
        await b.add_inbox_item(item("shared"))
        await b.add_inbox_item(item("only-b"))

        sessions = await SqliteStore.list_sessions(path)
        assert [(s.session_id, s.message_count) for s in sessions] == [("a", 2), ("b", 0)]
        assert sessions[0].created_at <= sessions[0].updated_at
        assert [s.first_message for s in sessions] == ["1", None]

        resolved = await SqliteStore.resolve_inbox_item(path, "only-b", "answer")
        assert (resolved.status, resolved.response) == ("resolved", "answer")
        assert resolved.resolved_at is not None
        assert [i.id for i in await b.get_resolved_inbox_items()] == ["only-b"]

        with pytest.raises(InboxItemError, match="conversations 'a', 'b'; pass session_id="):
            SqliteStore.resolve_inbox_item_sync(path, "shared", "x")
        SqliteStore.resolve_inbox_item_sync(path, "shared", "for a", session_id="a")
        assert [i.response for i in await a.get_resolved_inbox_items()] == ["for a"]
        assert await b.get_resolved_inbox_items() != []  # b's own item is untouched
        assert (await b.get_inbox_items())[0].status == "pending"

        with pytest.raises(InboxItemError, match="is already resolved"):
            await SqliteStore.resolve_inbox_item(path, "shared", "again", session_id="a")
        with pytest.raises(InboxItemError, match="'ghost': no such item in conversation 'a'"):
            await SqliteStore.resolve_inbox_item(path, "ghost", "x", session_id="a")


async def test_outside_helpers_never_create_a_file(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    with pytest.raises(StoreNotFoundError, match=r"no glove store at '.*typo\.db'"):
        await SqliteStore.list_sessions(missing)
    with pytest.raises(StoreNotFoundError):
        SqliteStore.resolve_inbox_item_sync(missing, "i1", "x")
    assert not missing.exists()


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    "content", [b"this is not a database\n" * 200, b"tiny", b"SQLite format 3\x00" + b"\xff" * 84]
)
async def test_a_file_that_is_not_a_database_is_refused_and_left_untouched(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    store = SqliteStore(path, "s1")
    with pytest.raises(StoreCorruptError, match=r"notes\.txt' is not a usable glove store"):
        await store.get_messages()
    with pytest.raises(StoreCorruptError):
        await store.append_messages([Message(sender="user", text="must not be written")])
    with pytest.raises(StoreCorruptError):
        SqliteStore.resolve_inbox_item_sync(path, "i1", "x")
    await store.aclose()
    assert path.read_bytes() == content
    assert names_in(tmp_path) == ["notes.txt"]


async def test_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    async with SqliteStore(path, "s1") as store:
        await store.append_messages([Message(sender="user", text="from the future")])
    conn = sqlite3.connect(path)
    conn.execute("UPDATE glove_store_schema SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = path.read_bytes()

    newer = SqliteStore(path, "s1")
    with pytest.raises(StoreVersionError, match=f"schema version {SCHEMA_VERSION + 1}") as info:
        await newer.open()
    assert (info.value.found, info.value.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
    with pytest.raises(StoreVersionError, match="Upgrade glove"):
        await newer.append_messages([Message(sender="user", text="x")])
    with pytest.raises(StoreVersionError):
        await SqliteStore.list_sessions(path)
    await newer.aclose()
    assert path.read_bytes() == before


async def test_a_damaged_version_table_is_reported_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE glove_store_schema (version INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreCorruptError, match="schema version table holds"):
        await SqliteStore(path, "s").open()


async def test_a_damaged_message_row_is_named_and_nothing_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    async with SqliteStore(path, "s1") as store:
        await store.append_messages([Message(sender="user", text=str(n)) for n in range(3)])
    conn = sqlite3.connect(path)
    conn.execute('UPDATE glove_messages SET data = \'{"sender": "robot"}\' WHERE seq = 2')
    conn.commit()
    conn.close()
    async with SqliteStore(path, "s1") as store:
        with pytest.raises(StoreCorruptError, match="message row 2 of conversation 's1'"):
            await store.get_messages()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM glove_messages").fetchone() == (3,)
    conn.close()


async def test_an_existing_database_gains_the_tables_and_keeps_its_own(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE app_users (name TEXT)")
    conn.execute("INSERT INTO app_users VALUES ('ada')")
    conn.commit()
    conn.close()
    async with SqliteStore(path, "s") as store:
        await store.append_messages([Message(sender="user", text="hi")])
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM app_users").fetchall() == [("ada",)]
    assert conn.execute("SELECT version FROM glove_store_schema").fetchall() == [(SCHEMA_VERSION,)]
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


async def test_closed_store_refuses_calls(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "g.db", "s")
    await store.append_messages([Message(sender="user", text="hi")])
    await store.aclose()
    await store.aclose()  # idempotent
    with pytest.raises(GloveStateError, match=r"SqliteStore\(.*'s'\) is closed"):
        await store.get_messages()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="session_id must be a non-empty string"):
        SqliteStore("x.db", "")
    with pytest.raises(ValueError, match="busy_timeout"):
        SqliteStore("x.db", "s", busy_timeout=-1)


async def test_many_store_objects_appending_concurrently_lose_nothing(backend: Backend) -> None:
    stores = [await backend.store("shared", fresh=True) for _ in range(4)]
    stores.append(await backend.store("other"))

    async def writer(index: int, store: SqliteStore) -> None:
        for n in range(25):
            await store.append_messages(
                [Message(sender="user", text=f"{index}:{n}"), Message(sender="agent")]
            )
            await store.increment_turn()

    await asyncio.gather(*(writer(i, s) for i, s in enumerate(stores)))
    shared = await stores[0].get_messages()
    assert len(shared) == 4 * 25 * 2
    assert await stores[0].get_turn_count() == 100
    assert len(await stores[4].get_messages()) == 50
    for index in range(4):
        mine = [m.text for m in shared if m.text.startswith(f"{index}:")]
        assert mine == [f"{index}:{n}" for n in range(25)]
    # Each append stayed contiguous: every user message is directly followed by its reply.
    assert all(m.sender == "agent" for m in shared[1::2])


# --- property: any Message survives the file ----------------------------------------------

# Non-finite floats are left out: JSON has no spelling for them (pydantic writes null).
_finite = st.floats(allow_nan=False, allow_infinity=False)
_json_leaf = st.none() | st.booleans() | st.integers() | _finite | st.text()
_json: st.SearchStrategy[Any] = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_media = st.sampled_from(["image/png", "application/pdf"])
_parts = st.lists(
    st.one_of(
        st.builds(TextPart, text=st.text()),
        st.builds(ImagePart, media_type=_media, data=st.none() | st.text(), url=st.none()),
        st.builds(DocumentPart, media_type=_media, url=st.text(), title=st.none() | st.text()),
    ),
    max_size=3,
)
_result_data = st.builds(
    ToolResultData,
    status=st.sampled_from(["success", "error", "aborted"]),
    data=_json,
    message=st.none() | st.text(),
    render_data=_json,
    content=st.none() | _parts,
    tool_references=st.none() | st.lists(st.text(), max_size=3),
)
_messages = st.builds(
    Message,
    sender=st.sampled_from(["user", "agent"]),
    text=st.text(),
    content=st.none() | _parts,
    tool_calls=st.none()
    | st.lists(
        st.builds(
            ToolCall,
            id=st.text(min_size=1),
            name=st.text(min_size=1),
            input=st.dictionaries(st.text(), _json, max_size=3),
        ),
        max_size=2,
    ),
    tool_results=st.none()
    | st.lists(
        st.builds(ToolResult, call_id=st.text(), name=st.text(), result=_result_data),
        max_size=2,
    ),
    is_compaction=st.booleans(),
    framework_context=st.sampled_from([None, "runtime", "event", "inbox"]),
    id=st.text(min_size=1),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(_messages, min_size=1, max_size=4))
def test_messages_round_trip_through_the_file(tmp_path: Path, batch: list[Message]) -> None:
    async def round_trip() -> list[Message]:
        # A fresh session per example; the file is shared across examples on purpose.
        async with SqliteStore(tmp_path / "prop.db", uuid.uuid4().hex) as store:
            await store.append_messages(batch)
            return await store.get_messages()

    assert asyncio.run(round_trip()) == batch


async def test_many_connections_creating_one_file_at_once_all_succeed(tmp_path: Path) -> None:
    # Several connections switching a brand-new file to WAL at the same moment used to get
    # "database is locked" at once (SQLite skips its busy handler there): about 1 run in 75.
    for round_ in range(60):
        path = tmp_path / f"new-{round_}.db"
        stores = [SqliteStore(path, f"s{k % 3}") for k in range(8)]
        try:
            await asyncio.gather(
                *(s.append_messages([Message(sender="user", text="x")]) for s in stores)
            )
        finally:
            for store in stores:
                await store.aclose()
        async with SqliteStore(path, "s0") as check:
            assert len(await check.get_messages()) == 3


async def test_a_file_written_before_the_sqlite_layer_opens_and_is_migrated(
    tmp_path: Path,
) -> None:
    path = legacy_file(tmp_path, "all_components")
    async with SqliteStore(path, "conv") as store:
        assert [m.id for m in await store.get_messages()] == ["m1", "m2"]
        assert await store.get_usage() == Usage(input_tokens=12, output_tokens=3)
        assert await store.get_turn_count() == 1
        assert [t.id for t in await store.get_tasks()] == ["t1"]
        assert await store.get_permission("rm", "{}") == "denied"
        assert [i.id for i in await store.get_inbox_items()] == ["i1"]
        await store.append_messages([Message(id="m3", sender="user", text="after the upgrade")])
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT component, version FROM glove_store_schema").fetchall()
    seq = conn.execute("SELECT seq FROM glove_messages WHERE message_id = 'm3'").fetchone()
    conn.close()
    assert rows == [("glove_core.conversations", SCHEMA_VERSION)]
    assert seq == (3,)
    resolved = SqliteStore.resolve_inbox_item_sync(path, "i1", "done")
    assert resolved.status == "resolved"
    assert [s.session_id for s in await SqliteStore.list_sessions(path)] == ["conv"]


async def test_the_store_uses_the_layers_busy_timeout(tmp_path: Path) -> None:
    assert SqliteStore(tmp_path / "g.db", "s").busy_timeout == SQLITE_BUSY_TIMEOUT
    path = tmp_path / "g.db"
    async with SqliteStore(path, "s") as store:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            async with SqliteStore(path, "s", busy_timeout=0) as impatient:
                with pytest.raises(StoreError, match="stayed locked"):
                    await impatient.append_messages([Message(sender="user", text="x")])
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert await store.get_messages() == []


async def test_the_window_read_parses_only_the_window(tmp_path: Path) -> None:
    # A damaged row before the last compaction does not stop a request (it reads from the
    # compaction on); one inside the window is named, as get_messages names it.
    path = tmp_path / "g.db"
    messages = [
        Message(sender="user", text="0"),
        Message(sender="user", text="summary", is_compaction=True),
        Message(sender="agent", text="2"),
    ]
    async with SqliteStore(path, "s1") as store:
        await store.append_messages(messages)
    conn = sqlite3.connect(path)
    conn.execute('UPDATE glove_messages SET data = \'{"sender": "robot"}\' WHERE seq = 1')
    conn.commit()
    async with SqliteStore(path, "s1") as store:
        assert await store.get_messages_since_compaction() == messages[1:]
        with pytest.raises(StoreCorruptError, match="message row 1 of conversation 's1'"):
            await store.get_messages()
    conn.execute('UPDATE glove_messages SET data = \'{"sender": "robot"}\' WHERE seq = 3')
    conn.commit()
    conn.close()
    async with SqliteStore(path, "s1") as store:
        with pytest.raises(StoreCorruptError, match="message row 3 of conversation 's1'"):
            await store.get_messages_since_compaction()
