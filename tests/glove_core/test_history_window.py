"""Issue 18, point 3: each request read the whole past.

The loop read ``store.get_messages()`` — every message ever saved — at the start of each
request and then dropped everything before the last compaction. Now a store may offer
``CompactedHistoryStore.get_messages_since_compaction()`` (``MemoryStore`` and ``SqliteStore``
do): the loop, ``Glove.switched_off_tools`` and compaction read only the window the model sees.
``SqliteStore`` finds the newest compaction through an index (migration 2), so the read costs
the window, not the conversation. Figures: ``bench/history_cost.py``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glove_core import (
    CompactedHistoryStore,
    CompactionConfig,
    Glove,
    MemoryStore,
    Message,
    ScriptedModel,
    SqliteStore,
    StoreAdapter,
    ToolCall,
    Usage,
    disable_tools,
    tool,
)
from glove_core.models.scripted import ScriptItem
from glove_core.sqlite import SqliteDatabase, SqliteSchema
from glove_core.stores._sqlite_messages import WINDOW_SQL
from glove_core.stores.base import read_visible_history, since_last_compaction
from glove_core.stores.memory import PlainMemoryStore

# --- the capability, on both stores ------------------------------------------------------

_histories = st.lists(
    st.lists(st.booleans(), min_size=0, max_size=5),  # one append: is_compaction per message
    min_size=0,
    max_size=6,
)


def _batches(flags: list[list[bool]], tag: str) -> list[list[Message]]:
    return [
        [Message(sender="user", text=f"{tag}{b}.{i}", is_compaction=c) for i, c in enumerate(batch)]
        for b, batch in enumerate(flags)
    ]


async def _check_window(store: StoreAdapter, batches: list[list[Message]]) -> None:
    assert isinstance(store, CompactedHistoryStore)
    for batch in batches:
        await store.append_messages(batch)
        # After every append, not only at the end: the window moves with each compaction.
        window = await store.get_messages_since_compaction()
        assert window == since_last_compaction(await store.get_messages())


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ours=_histories, theirs=_histories)
def test_the_window_equals_the_filter_over_every_message(
    tmp_path: Path, ours: list[list[bool]], theirs: list[list[bool]]
) -> None:
    async def run() -> None:
        await _check_window(MemoryStore("m"), _batches(ours, "m"))
        # Two conversations in one file: another session's compactions never move ours.
        path, sid = tmp_path / "window.db", uuid.uuid4().hex
        async with SqliteStore(path, sid) as a, SqliteStore(path, sid + "-other") as b:
            for mine, other in zip(_batches(ours, "a"), _batches(theirs, "b"), strict=False):
                await b.append_messages(other)
                await _check_window(a, [mine])
            await _check_window(b, _batches(theirs, "c"))

    asyncio.run(run())


async def test_a_store_without_the_capability_is_read_whole_and_filtered() -> None:
    store = PlainMemoryStore("plain")
    assert not isinstance(store, CompactedHistoryStore)
    messages = [
        Message(sender="user", text="old"),
        Message(sender="user", text="summary", is_compaction=True),
        Message(sender="agent", text="after"),
    ]
    await store.append_messages(messages)
    assert await read_visible_history(store) == messages[1:]


def _plan(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> str:
    return " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


async def test_sqlite_finds_the_window_through_indexes_without_a_scan(tmp_path: Path) -> None:
    path = tmp_path / "plan.db"
    async with SqliteStore(path, "s") as store:
        await store.append_messages([Message(sender="user", text="x")])
    conn = sqlite3.connect(path)
    try:
        plan = _plan(conn, WINDOW_SQL, ("s", "s"))  # the statement the store runs
    finally:
        conn.close()
    assert "SCAN" not in plan, plan
    assert "glove_messages_compactions (session_id=? AND is_compaction=?)" in plan, plan
    assert "glove_messages_by_session (session_id=? AND seq>?)" in plan, plan


async def test_a_version_1_file_gains_the_index_and_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    version_1 = SqliteSchema(
        name=SqliteStore.schema.name, migrations=SqliteStore.schema.migrations[:1]
    )
    old = [
        Message(sender="user", text="before"),
        Message(sender="user", text="summary", is_compaction=True),
        Message(sender="agent", text="after"),
    ]
    db = SqliteDatabase(str(path), version_1)
    rows = [("s", m.id, m.sender, int(m.is_compaction), m.model_dump_json()) for m in old]
    await db.write(
        lambda conn: conn.executemany(
            "INSERT INTO glove_messages (session_id, message_id, sender, is_compaction, data) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    )
    await db.aclose()
    async with SqliteStore(path, "s") as store:
        assert await store.get_messages_since_compaction() == old[1:]
        assert await store.get_messages() == old
    conn = sqlite3.connect(path)
    try:
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        versions = conn.execute("SELECT component, version FROM glove_store_schema").fetchall()
    finally:
        conn.close()
    assert "glove_messages_compactions" in indexes
    assert versions == [(SqliteStore.schema.name, 2)]


# --- the loop reads only the window -------------------------------------------------------


class ReadCounter:
    """A real store (SqliteStore) seen through a counter of what each read returned."""

    def __init__(self, inner: SqliteStore) -> None:
        self.inner = inner
        self.whole_reads = 0
        self.window_sizes: list[int] = []

    @property
    def identifier(self) -> str:
        return self.inner.identifier

    async def get_messages(self) -> list[Message]:
        self.whole_reads += 1
        return await self.inner.get_messages()

    async def get_messages_since_compaction(self) -> list[Message]:
        window = await self.inner.get_messages_since_compaction()
        self.window_sizes.append(len(window))
        return window

    async def append_messages(self, messages: list[Message]) -> None:
        await self.inner.append_messages(messages)

    async def get_usage(self) -> Usage:
        return await self.inner.get_usage()

    async def add_usage(self, usage: Usage) -> None:
        await self.inner.add_usage(usage)

    async def get_turn_count(self) -> int:
        return await self.inner.get_turn_count()

    async def increment_turn(self) -> None:
        await self.inner.increment_turn()

    async def reset_counters(self) -> None:
        await self.inner.reset_counters()


OLD_MESSAGES = 300


async def _long_conversation(path: Path) -> list[Message]:
    """A conversation of OLD_MESSAGES messages, then a compaction and two more."""
    tail = [
        Message(
            sender="user",
            text="<conversation_summary>earlier</conversation_summary>",
            is_compaction=True,
        ),
        Message(sender="user", text="what next?"),
        Message(sender="agent", text="this"),
    ]
    async with SqliteStore(path, "long") as store:
        old = [
            Message(sender="user" if i % 2 == 0 else "agent", text=f"old message {i}")
            for i in range(OLD_MESSAGES)
        ]
        await store.append_messages(old)
        await store.append_messages(tail)
    return tail


async def test_a_restart_reads_only_the_window_since_the_last_compaction(
    tmp_path: Path,
) -> None:
    path = tmp_path / "long.db"
    tail = await _long_conversation(path)
    model = ScriptedModel(["fine"])
    async with SqliteStore(path, "long") as inner:  # a new process: a fresh store object
        store = ReadCounter(inner)
        agent = Glove(model=model, system_prompt="s", store=store).build()
        await agent.process_request("and now?")
        assert await agent.switched_off_tools() == set()
        sent = model.requests[0].messages
        assert [m.text for m in sent] == [*(m.text for m in tail), "and now?"]
        assert store.whole_reads == 0
        assert store.window_sizes == [len(tail), len(tail) + 2]
        assert len(await inner.get_messages()) == OLD_MESSAGES + len(tail) + 2  # all kept


async def test_tools_switched_off_before_a_compaction_stay_off_after_it(
    tmp_path: Path,
) -> None:
    ran: list[str] = []

    @tool
    def shell(command: str) -> str:
        """Run a command."""
        ran.append(command)
        return "ran"

    path = tmp_path / "switch.db"
    config = CompactionConfig(context_limit=20_000, threshold=0.5, keep_last=0)
    filler = "x" * 50_000  # about 12,500 tokens: over the trigger, so the next call compacts
    script: list[ScriptItem] = [
        "noted",  # the request that switches shell off
        "a long answer " + filler,
        "summary of it all",  # the compaction's summary call
        [ToolCall(id="c1", name="shell", input={"command": "ls"})],
        "it is off",
    ]
    model = ScriptedModel(script)
    async with SqliteStore(path, "c") as store:
        agent = Glove(model=model, system_prompt="s", store=store, compaction=config).build()
        await agent.add_context([disable_tools(["shell"])])
        await agent.process_request("switch it off")
        await agent.process_request("tell me a lot")
    async with SqliteStore(path, "c") as store:  # restart, then a request that compacts
        agent = Glove(model=model, system_prompt="s", store=store, compaction=config).fold(shell)
        agent.build()
        assert await agent.switched_off_tools() == {"shell"}
        await agent.process_request("run ls")
        window = await store.get_messages_since_compaction()
    assert window[0].is_compaction and window[1].framework_context == "runtime"
    assert 'disable="shell"' in window[1].text
    assert ran == []  # answered tool_inactive without running
    results = [r for m in window for r in m.tool_results or []]
    assert (results[0].result.message or "").startswith("tool_inactive")
    async with SqliteStore(path, "c") as store:
        again = Glove(model=model, system_prompt="s", store=store).build()
        assert await again.switched_off_tools() == {"shell"}


@pytest.mark.parametrize("store_kind", ["memory", "plain memory", "sqlite"])
async def test_every_store_sends_the_history_from_the_last_compaction(
    tmp_path: Path, store_kind: str
) -> None:
    # The capability changes what is read, never what is sent.
    store: StoreAdapter
    if store_kind == "sqlite":
        store = SqliteStore(tmp_path / "s.db", "s")
    else:
        store = MemoryStore() if store_kind == "memory" else PlainMemoryStore()
    await store.append_messages(
        [
            Message(sender="user", text="a"),
            Message(sender="agent", text="b"),
            Message(sender="user", text="sum", is_compaction=True),
            Message(sender="agent", text="c"),
        ]
    )
    model = ScriptedModel(["ok"])
    await Glove(model=model, system_prompt="s", store=store).build().process_request("q")
    assert [m.text for m in model.requests[0].messages] == ["sum", "c", "q"]
    if isinstance(store, SqliteStore):
        await store.aclose()


def test_the_restatement_after_a_summary_is_not_conversation_to_compact_again() -> None:
    from glove_core.context_items import is_restatement, restate_switched_off

    restated = restate_switched_off(["shell", "deploy"])
    assert restated is not None and is_restatement(restated)
    # An application's own context update, or a user's words, are conversation.
    assert not is_restatement(Message(sender="user", text=restated.text))
    mixed = restated.text.replace("</context_update>", "<notice>hi</notice>\n</context_update>")
    assert not is_restatement(Message(sender="user", text=mixed, framework_context="runtime"))
