"""Issue 17: the seams of discovery — a custom ranker, the index cache of ``match_entries``,
learned tools kept by the adapter (a real local MCP server, a real SQLite file), and what the
discovery subagent sees. Recall figures live in bench/discovery.py, not here."""

from __future__ import annotations

import gc
import sqlite3
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from glove_core import Glove, ScriptedModel, ToolCall
from glove_core.sqlite import SqliteDatabase, SqliteSchema
from glove_mcp import (
    CatalogueIndex,
    McpCatalogueEntry,
    MemoryMcpAdapter,
    SqliteMcpAdapter,
    match_entries,
    mount_mcp,
)
from glove_mcp.adapter import LearnedTool, LearnedToolsStore
from glove_mcp.discovery import (
    FIND_CAPABILITY,
    CatalogueRanker,
    RankingRequest,
    _index_cache,
    fuse_rankings,
    policy_prompt,
)
from glove_mcp.testing import serve


def entry(id: str, description: str, **extra: Any) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id=id, name=id.title(), description=description, url=f"https://x/{id}/mcp", **extra
    )


def ids(entries: Sequence[Any]) -> list[str]:
    return [e.id for e in entries]


CATALOGUE = [
    entry("mail", "Read and send email.", tags=["email"]),
    entry("acme", "Acme's official MCP server.", keywords=["bug tracker"]),
    entry("chat", "Post messages to team channels.", tags=["chat"]),
]


# --- the ranking seam ------------------------------------------------------------------------


@dataclass
class Reversed:
    """A ranker that puts the catalogue in reverse order and keeps what it was asked."""

    seen: list[RankingRequest] = field(default_factory=list)

    def rank(self, request: RankingRequest) -> Sequence[int]:
        self.seen.append(request)
        return list(reversed(range(len(request.ids))))


def test_a_custom_ranker_gets_the_request_and_decides_the_order() -> None:
    ranker = Reversed()
    assert isinstance(ranker, CatalogueRanker)
    index = CatalogueIndex(CATALOGUE, ranker=ranker, tool_names={"acme": ["file_bug"]})
    assert ids(index.search("send email")) == ["chat", "acme", "mail"]
    (request,) = ranker.seen
    assert request.query == "send email" and request.ids == ("mail", "acme", "chat")
    assert request.lexical[0][0] == 0  # the lexical ranking: "mail" first, with its score
    assert "Keywords: bug tracker." in request.texts[1] and "file_bug" in request.texts[1]
    # Tag filters and limits apply to what the ranker returns.
    assert ids(index.search("send email", tags=["email"])) == ["mail"]
    assert ranker.seen[-1].allowed == frozenset({0})
    assert ids(index.search("email", limit=1)) == ["chat"]
    # The catalogue key changes with what the ranker is given (a learned tool here).
    before = ranker.seen[-1].catalogue_key
    index.add_tools("chat", [LearnedTool("post_message", "Post a message.")])
    index.search("email")
    assert ranker.seen[-1].catalogue_key != before
    assert "post_message (Post a message.)" in index.entry_text("chat")


def test_a_query_with_no_catalogue_word_still_reaches_the_ranker() -> None:
    ranker = Reversed()
    index = CatalogueIndex(CATALOGUE, ranker=ranker)
    assert ids(index.search("zzqx", limit=1)) == ["chat"]
    assert ranker.seen[-1].lexical == []
    assert ids(index.search("", limit=1)) == ["mail"]  # empty: catalogue order, no ranker
    assert len(ranker.seen) == 1


class BadPositions:
    def __init__(self, answer: list[Any]) -> None:
        self.answer = answer

    def rank(self, request: RankingRequest) -> Sequence[int]:
        return self.answer


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([7], r"returned 7: positions must be ints from 0 to 2"),
        (["mail"], r"returned 'mail'"),
        ([True], r"returned True"),
        ([1, 1], r"returned position 1 twice"),
    ],
)
def test_a_ranker_returning_bad_positions_is_a_clear_error(answer: list[Any], message: str) -> None:
    index = CatalogueIndex(CATALOGUE, ranker=BadPositions(answer))
    with pytest.raises(ValueError, match=message):
        index.search("email")


def test_something_that_is_not_a_ranker_is_refused() -> None:
    with pytest.raises(TypeError, match=r"ranker must be a CatalogueRanker .* got int"):
        CatalogueIndex(CATALOGUE, ranker=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ranker must be 'default', None or a .* got 'bm25'"):
        CatalogueIndex(CATALOGUE, ranker="bm25")  # type: ignore[arg-type]


async def test_mount_mcp_refuses_a_bad_discovery_ranker() -> None:
    glove = Glove(model=ScriptedModel([]), system_prompt="main")
    with pytest.raises(TypeError, match="ranker must be a CatalogueRanker"):
        await mount_mcp(
            glove,
            MemoryMcpAdapter("c"),
            CATALOGUE,
            discovery_ranker=object(),  # type: ignore[arg-type]
        )


def test_fuse_rankings_adds_reciprocal_ranks() -> None:
    # 0 and 2 tie (1/61 + 1/63) above 1 (2/62); the tie keeps first appearance.
    assert fuse_rankings([0, 1, 2], [2, 1, 0]) == [0, 2, 1]
    assert fuse_rankings([0, 1], [1, 3]) == [1, 0, 3]
    assert fuse_rankings([0, 1], [1, 0], weights=[2.0, 1.0]) == [0, 1]
    with pytest.raises(ValueError, match="weights has 1 values for 2 rankings"):
        fuse_rankings([0], [1], weights=[1.0])


# --- the index cache of match_entries ------------------------------------------------------


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the indexes match_entries builds (the cache starts empty)."""
    _index_cache.clear_index_cache()
    counted: list[int] = []
    real = _index_cache.cached_index

    def counting(entries: Sequence[Any], build: Any) -> Any:
        def counted_build(items: Sequence[Any]) -> Any:
            counted.append(len(items))
            return build(items)

        return real(entries, counted_build)

    monkeypatch.setattr("glove_mcp.discovery.index.cached_index", counting)
    yield counted
    _index_cache.clear_index_cache()


def test_the_same_list_or_equal_entries_reuse_one_index(builds: list[int]) -> None:
    first = list(CATALOGUE)
    assert ids(match_entries(first, "email"))[:1] == ["mail"]
    match_entries(first, "chat channels")
    assert builds == [3]
    # Equal entries in another list (a catalogue loaded again): no new index, and the answer
    # holds the caller's own objects.
    again = [McpCatalogueEntry.model_validate(e.model_dump()) for e in CATALOGUE]
    found = match_entries(again, "email")[0]
    assert found is again[0] and found is not first[0]
    assert builds == [3]


def test_the_identity_cache_keeps_its_objects_so_a_freed_address_finds_nothing(
    builds: list[int],
) -> None:
    # An identity key is a tuple of id()s: if the objects behind it could be freed, a new
    # entry at the same address would find another catalogue's index. The cache keeps them.
    match_entries(list(CATALOGUE), "email")
    again = [McpCatalogueEntry.model_validate(e.model_dump()) for e in CATALOGUE]
    match_entries(again, "email")  # equal content: the first index, under again's ids
    alive = [weakref.ref(e) for e in again]
    del again
    gc.collect()
    assert all(ref() is not None for ref in alive)
    assert builds == [3]


def test_a_changed_catalogue_gets_a_new_index(builds: list[int]) -> None:
    match_entries(CATALOGUE, "email")
    changed = [CATALOGUE[0], entry("acme", "Track bugs and issues."), CATALOGUE[2]]
    assert ids(match_entries(changed, "bugs"))[:1] == ["acme"]
    assert builds == [3, 3]
    keyed = [*CATALOGUE[:2], entry("chat", "Post messages.", keywords=["standup"])]
    assert ids(match_entries(keyed, "standup"))[:1] == ["chat"]
    assert builds == [3, 3, 3]


def test_a_list_changed_in_place_gets_a_new_index(builds: list[int]) -> None:
    # The catalogue of the call before is checked first, entry by entry: the same list
    # object with an entry replaced, or one more, is another catalogue.
    cat = list(CATALOGUE)
    match_entries(cat, "email")
    match_entries(cat, "email")
    assert builds == [3]
    cat[1] = entry("acme", "Track bugs and issues.")
    assert ids(match_entries(cat, "bugs"))[:1] == ["acme"]
    cat.append(entry("sky", "Weather forecasts."))
    assert ids(match_entries(cat, "forecasts"))[:1] == ["sky"]
    del cat[-1]
    assert "sky" not in ids(match_entries(cat, "forecasts"))
    assert builds == [3, 3, 4]  # the last list is the second's content: found by content


def test_mutable_items_are_compared_by_content(builds: list[int]) -> None:
    class Item:
        def __init__(self, id: str, description: str) -> None:
            self.id, self.name, self.description = id, id, description
            self.tags: list[str] = []

    items = [Item("a", "weather forecasts"), Item("b", "stock quotes")]
    assert ids(match_entries(items, "forecasts"))[:1] == ["a"]
    items[1].description = "rain forecasts and radar"
    assert ids(match_entries(items, "radar"))[:1] == ["b"]  # the same objects, changed: rebuilt
    assert builds == [2, 2]


def test_the_cache_is_bounded(builds: list[int]) -> None:
    for i in range(_index_cache.CACHE_SIZE + 1):
        match_entries([entry(f"e{i}", "email")], "email")
    match_entries([entry("e0", "email")], "email")  # the oldest was dropped: built again
    assert len(builds) == _index_cache.CACHE_SIZE + 2


def test_a_bad_catalogue_is_not_cached(builds: list[int]) -> None:
    twice = [entry("a", "x"), entry("a", "y")]
    for _ in range(2):
        with pytest.raises(ValueError, match="catalogue id 'a' appears twice"):
            match_entries(twice, "x")
    assert builds == [2, 2]


# --- learned tools -------------------------------------------------------------------------


async def test_the_memory_adapter_keeps_learned_tools_per_server() -> None:
    adapter = MemoryMcpAdapter("c")
    assert isinstance(adapter, LearnedToolsStore)
    assert await adapter.get_learned_tools() == {}
    tools = [LearnedTool("create_issue", "Create an issue."), LearnedTool("create_issue", "x")]
    await adapter.save_learned_tools("tracker", tools)
    assert await adapter.get_learned_tools() == {
        "tracker": [LearnedTool("create_issue", "Create an issue.")]
    }
    await adapter.save_learned_tools("tracker", [LearnedTool("list_issues", "d" * 900)])
    (kept,) = (await adapter.get_learned_tools())["tracker"]
    assert kept.name == "list_issues" and len(kept.description) == 500


async def test_bad_learned_tools_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="a learned tool needs a non-empty str name"):
        LearnedTool("")
    with pytest.raises(TypeError, match="description must be a str, got int"):
        LearnedTool("t", 3)  # type: ignore[arg-type]
    for adapter in (MemoryMcpAdapter("c"), SqliteMcpAdapter(tmp_path / "a.db", "c")):
        with pytest.raises(TypeError, match="must be LearnedTool objects, got str"):
            await adapter.save_learned_tools("s", ["create_issue"])  # type: ignore[list-item]
        if isinstance(adapter, SqliteMcpAdapter):
            assert await adapter.get_learned_tools() == {}  # nothing half-written
            await adapter.aclose()


async def test_a_version_1_file_is_migrated_and_keeps_its_active_servers(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    first = SqliteMcpAdapter.schema.migrations[:1]
    old = SqliteDatabase(path, SqliteSchema(SqliteMcpAdapter.schema.name, first))
    await old.open()
    await old.write(
        lambda conn: conn.execute(
            "INSERT INTO glove_mcp_active VALUES ('conv', 'notes', '2026-01-01', 1)"
        )
    )
    await old.aclose()
    async with SqliteMcpAdapter(path, "conv") as adapter:
        assert await adapter.get_active() == ["notes"]
        await adapter.save_learned_tools("notes", [LearnedTool("search_pages", "Search.")])
        assert await adapter.get_learned_tools() == {
            "notes": [LearnedTool("search_pages", "Search.")]
        }
    with sqlite3.connect(path) as conn:
        (version,) = conn.execute(
            "SELECT version FROM glove_store_schema WHERE component = ?",
            (SqliteMcpAdapter.schema.name,),
        ).fetchone()
    assert version == 3


@pytest.fixture
async def weak_catalogue() -> AsyncIterator[list[McpCatalogueEntry]]:
    # A real registry-style description that says nothing of what the server does.
    async with serve("tracker") as url, serve("notes") as notes_url:
        yield [
            McpCatalogueEntry(
                id="acme", name="Acme", url=url, description="Acme's official MCP server."
            ),
            McpCatalogueEntry(
                id="pages", name="Pages", url=notes_url, description="Notes and pages."
            ),
        ]


async def test_tools_learnt_in_one_conversation_serve_the_next(
    weak_catalogue: list[McpCatalogueEntry], tmp_path: Path
) -> None:
    path = tmp_path / "agent.db"
    # Lexically, nothing in the catalogue says "issue" before the tools are known.
    assert CatalogueIndex(weak_catalogue, ranker=None).search("delete an issue") == []
    glove = Glove(model=ScriptedModel([]), system_prompt="main")
    async with (
        SqliteMcpAdapter(path, "first") as adapter,
        await mount_mcp(glove, adapter, weak_catalogue) as mount,
    ):
        await mount.activate("acme")

    # Another conversation, another adapter on the same file, nothing active there.
    model = ScriptedModel(
        [
            [ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "delete an issue"})],
            [ToolCall(id="s1", name="list_capabilities", input={"query": "delete an issue"})],
            "acme can do it",
            "ok",
        ]
    )
    second = Glove(model=model, system_prompt="main", server_mode=True)
    async with (
        SqliteMcpAdapter(path, "second") as adapter,
        await mount_mcp(second, adapter, weak_catalogue),
    ):
        learned = await adapter.get_learned_tools()
        # The server's tools in listing order (then the bridge's resource reader, if any).
        assert [t.name for t in learned["acme"]][:4] == [
            "list_issues",
            "create_issue",
            "update_issue",
            "delete_issue",
        ]
        second.build()
        await second.process_request("get rid of issue 3")
    sub = [r for r in model.requests if r.system != "main"]
    assert "(tools: list_issues, create_issue, update_issue, delete_issue" in sub[0].system
    listed = sub[1].messages[-1].tool_results
    assert listed is not None
    (row, *_) = listed[0].result.data
    assert row["id"] == "acme" and "delete_issue" in row["tools"]
    assert set(row) >= {"id", "name", "description", "tags", "keywords", "tools", "active"}


class BrokenStore(MemoryMcpAdapter):
    async def save_learned_tools(self, server_id: str, tools: Sequence[LearnedTool]) -> None:
        raise OSError("disk full")

    async def save_learned_listing(
        self,
        server_id: str,
        tools: Sequence[LearnedTool],
        *,
        instructions: str | None = None,
        ttl_ms: int | None = None,
    ) -> None:
        raise OSError("disk full")

    async def get_learned_tools(self) -> dict[str, list[LearnedTool]]:
        raise OSError("disk gone")


async def test_learning_that_fails_never_fails_an_activation_or_a_search(
    weak_catalogue: list[McpCatalogueEntry], caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(
        [
            [ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "notes"})],
            [ToolCall(id="s1", name="list_capabilities", input={"query": "notes"})],
            "pages",
            "ok",
        ]
    )
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    async with await mount_mcp(glove, BrokenStore("c"), weak_catalogue) as mount:
        assert await mount.activate("acme")
        glove.build()
        await glove.process_request("notes please")
    assert "could not keep the tools of 'acme' for discovery: disk full" in caplog.text
    assert "could not read the learned tools" in caplog.text
    listed = [r for r in model.requests if r.system != "main"][1].messages[-1].tool_results
    assert listed is not None and listed[0].result.data[0]["id"] == "pages"


# --- what the subagent sees ------------------------------------------------------------------


def test_the_whole_catalogue_is_shown_while_it_fits_else_the_best_candidates() -> None:
    big = [entry(f"s{i}", f"Service number {i} " + "d" * 200) for i in range(200)]
    whole = policy_prompt("auto-pick-best", big, set(), budget_tokens=20_000)
    assert "The whole catalogue" in whole and "s199" in whole
    picked = policy_prompt(
        "auto-pick-best", big, set(), budget_tokens=300, candidates=[big[150], big[7]]
    )
    assert "too many to list here" in picked and "best matches for the need" in picked
    assert picked.index("- s150") < picked.index("- s7") and "s199" not in picked
    assert "search again in other words" in picked
    # Candidates are cut to the budget; none fitting leaves the advice to search.
    none_fit = policy_prompt("auto-pick-best", big, set(), budget_tokens=10, candidates=big)
    assert "- s" not in none_fit and "call list_capabilities" in none_fit


def test_the_compact_catalogue_tells_near_duplicates_apart() -> None:
    twins = [
        entry("slack", "Slack integration.", tags=["chat"], keywords=["workspace"]),
        entry("slack-2", "Slack integration."),
    ]
    tools = {"slack": [f"tool_{i}" for i in range(15)]}
    prompt = policy_prompt("interactive", twins, {"slack-2"}, tools=tools)
    assert "- slack — Slack: Slack integration. [chat] {workspace} (tools: tool_0," in prompt
    assert "tool_11, +3 more)" in prompt
    assert "- slack-2 — Slack-2: Slack integration. (active)" in prompt


async def test_the_discovery_ranker_of_mount_mcp_ranks_for_the_subagent(
    weak_catalogue: list[McpCatalogueEntry],
) -> None:
    ranker = Reversed()
    model = ScriptedModel(
        [
            [ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "notes"})],
            [ToolCall(id="s1", name="list_capabilities", input={"query": "notes"})],
            "pages",
            "ok",
        ]
    )
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("c"), weak_catalogue, discovery_ranker=ranker
    ):
        glove.build()
        await glove.process_request("notes please")
    # The whole catalogue fits the prompt, so only list_capabilities asks the ranker.
    assert [r.query for r in ranker.seen] == ["notes"]
    listed = [r for r in model.requests if r.system != "main"][1].messages[-1].tool_results
    assert listed is not None
    assert [row["id"] for row in listed[0].result.data] == ["pages", "acme"]  # reversed
