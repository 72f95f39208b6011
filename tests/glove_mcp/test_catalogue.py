"""McpCatalogueEntry validation and catalogue ranking (match_entries, CatalogueIndex).

The ranking tests pin the lexical ranking (BM25F, ``ranker=None``): which words match, and
how. The default ranker fuses WordLlama on top of it, which may add candidates that share no
word with the query; tests/glove_mcp/discovery/test_default_ranker.py covers that."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from glove_mcp import CatalogueIndex, McpCatalogueEntry, match_entries
from glove_mcp.catalogue import CatalogueItem

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def entry(
    id: str, description: str, *, name: str | None = None, tags: list[str] | None = None
) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id=id,
        name=name or id.replace("-", " ").title(),
        description=description,
        url=f"https://mcp.example.com/{id}/mcp",
        tags=tags or [],
    )


def ids(entries: Sequence[CatalogueItem]) -> list[str]:
    return [e.id for e in entries]


def lexical(
    entries: Sequence[McpCatalogueEntry],
    query: str,
    tags: list[str] | None = None,
    limit: int = 10,
) -> list[McpCatalogueEntry]:
    """``match_entries`` over the lexical ranking alone."""
    return match_entries(CatalogueIndex(entries, ranker=None), query, tags, limit)


@pytest.fixture(scope="module")
def catalogue() -> list[McpCatalogueEntry]:
    raw = json.loads((DATA / "catalogue.json").read_text(encoding="utf-8"))
    return [McpCatalogueEntry.model_validate(item) for item in raw]


@pytest.fixture(scope="module")
def index(catalogue: list[McpCatalogueEntry]) -> CatalogueIndex:
    return CatalogueIndex(catalogue, ranker=None)


# --- McpCatalogueEntry -----------------------------------------------------------------------


def test_entry_defaults_and_fields() -> None:
    e = McpCatalogueEntry(id="notes_2", name="Notes", description="d", url="http://x/mcp")
    assert (e.tags, e.exclude_tools, e.metadata) == ([], [], {})


@pytest.mark.parametrize("bad", ["", "-lead", "_lead", "has space", "a__b", "dots.in.id", "ü"])
def test_entry_rejects_bad_ids(bad: str) -> None:
    with pytest.raises(ValidationError, match=r"catalogue id .* is invalid"):
        McpCatalogueEntry(id=bad, name="n", description="d", url="http://x/mcp")


def test_entry_rejects_unknown_fields_and_is_frozen() -> None:
    with pytest.raises(ValidationError, match="extra"):
        McpCatalogueEntry.model_validate(
            {"id": "a", "name": "n", "description": "d", "url": "u", "colour": "red"}
        )
    e = entry("a", "d")
    with pytest.raises(ValidationError, match="frozen"):
        e.name = "other"  # type: ignore[misc]


# --- ranking: general retrieval ------------------------------------------------------------


def test_inflections_meet_on_one_stem() -> None:
    cat = [
        entry("alpha", "Archive old spreadsheets."),
        entry("beta", "Schedule meetings and reply to invitations."),
    ]
    # None of these is a prefix of the catalogue's word, so only stemming can join them.
    for query in ("scheduling", "scheduled", "replied", "replies", "archiving", "archived"):
        want = ["alpha"] if query.startswith("arch") else ["beta"]
        assert ids(lexical(cat, query)) == want, query


def test_stemming_keeps_distinct_words_apart() -> None:
    # "notes" must not become "not", "plane" must not become "plan".
    cat = [entry("planner", "Plan your week."), entry("pilot", "Book a plane seat.")]
    assert ids(lexical(cat, "planes")) == ["pilot"]
    assert ids(lexical(cat, "planning")) == ["planner"]


def test_unknown_word_matches_as_prefix_of_a_catalogue_word() -> None:
    # "photograph" is not a catalogue word (nor in the synonym vocabulary); "photographers" is.
    cat = [entry("studio", "Book photographers by the hour."), entry("other", "Nothing related.")]
    assert ids(lexical(cat, "photograph")) == ["studio"]


def test_rare_terms_outweigh_common_ones() -> None:
    cat = [entry(f"filler-{i}", f"Search and read records of kind {i}.") for i in range(8)]
    cat.insert(0, entry("common", "Search, search and read everything, search again."))
    cat.append(entry("rare", "Invoices for customers."))
    # "search" appears everywhere (and three times in the first entry); "invoice" once.
    assert ids(lexical(cat, "search invoices", limit=2)) == ["rare", "common"]


def test_name_and_tags_weigh_more_than_description() -> None:
    cat = [
        entry("mentions", "Exports can be sent to a warehouse afterwards."),
        entry("tagged", "Stores rows.", tags=["warehouse"]),
        entry("named", "Stores rows.", name="Warehouse"),
    ]
    assert ids(lexical(cat, "warehouse")) == ["named", "tagged", "mentions"]


def test_phrase_bonus_prefers_adjacent_words() -> None:
    # Same words and lengths; only "named" has "pull requests" adjacent. It comes second in
    # the catalogue, so without the bonus the tie-break would put "scattered" first.
    cat = [
        entry("scattered", "Pull branches and review requests.", name="S"),
        entry("adjacent", "Review pull requests and branches.", name="A"),
    ]
    assert ids(lexical(cat, "pull requests")) == ["adjacent", "scattered"]


def test_tool_names_of_servers_seen_before_are_searchable() -> None:
    cat = [entry("board", "Team workspace."), entry("other", "Something else entirely.")]
    index = CatalogueIndex(cat, tool_names={"board": ["board__move_kanban_card"]}, ranker=None)
    assert ids(index.search("kanban")) == ["board"]
    assert match_entries(index, "thermostat") == []
    index.add_tool_names("other", ["setThermostat", "other__read_sensor", "setThermostat"])
    assert ids(index.search("thermostat")) == ["other"]
    assert index.tool_names("other") == ("setThermostat", "read_sensor")
    assert index.tool_names("board") == ("move_kanban_card",)


# --- filters, order and limits ----------------------------------------------------------------


def test_tag_filter_is_all_of_and_case_insensitive(index: CatalogueIndex) -> None:
    assert ids(index.search("read messages", tags=["Email", " microsoft "])) == ["outlook-mail"]
    assert {e.id for e in index.search("calendar", tags=["scheduling"])} == {
        "google-calendar",
        "outlook-calendar",
    }
    assert index.search("email", tags=["email", "no-such-tag"]) == []
    assert ids(index.search("email", tags=[])) == ids(index.search("email"))


def test_empty_query_lists_the_catalogue_in_order(
    catalogue: list[McpCatalogueEntry], index: CatalogueIndex
) -> None:
    assert match_entries(catalogue, "") == catalogue[:10]
    assert match_entries(index, "   ", limit=3) == catalogue[:3]
    assert match_entries(index, "the of and") == catalogue[:10]  # only stop words
    microsoft = [e for e in catalogue if "microsoft" in e.tags]
    assert match_entries(index, "", tags=["microsoft"], limit=50) == microsoft


def test_no_match_returns_nothing(index: CatalogueIndex) -> None:
    assert match_entries(index, "zzqx qqzv") == []


def test_ties_keep_catalogue_order_and_are_stable() -> None:
    cat = [entry(f"twin-{c}", "Send text messages.", name="Twin") for c in "cab"]
    assert ids(lexical(cat, "text messages")) == ["twin-c", "twin-a", "twin-b"]
    assert ids(lexical(cat[::-1], "text messages")) == ["twin-b", "twin-a", "twin-c"]
    index = CatalogueIndex(cat, ranker=None)
    assert all(ids(index.search("message")) == ["twin-c", "twin-a", "twin-b"] for _ in range(5))


def test_limit_caps_the_results(index: CatalogueIndex) -> None:
    assert len(match_entries(index, "search", limit=1)) == 1
    assert len(match_entries(index, "search", limit=4)) == 4
    assert len(match_entries(index, "search", limit=500)) == len(
        {e.id for e in match_entries(index, "search", limit=500)}
    )


def test_list_and_index_give_the_same_answer(
    catalogue: list[McpCatalogueEntry], index: CatalogueIndex
) -> None:
    fused = CatalogueIndex(catalogue)  # the default ranker, as match_entries uses
    for query in ("send an invoice", "who is on call", "deploy the site"):
        assert match_entries(catalogue, query) == match_entries(fused, query)


# --- bad input -----------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors(catalogue: list[McpCatalogueEntry]) -> None:
    with pytest.raises(ValueError, match="limit must be at least 1, got 0"):
        match_entries(catalogue, "email", limit=0)
    with pytest.raises(ValueError, match="got -2"):
        match_entries(catalogue, "email", limit=-2)
    with pytest.raises(TypeError, match="limit must be an int, got str"):
        match_entries(catalogue, "email", limit="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit must be an int, got bool"):
        match_entries(catalogue, "email", limit=True)
    for query in (None, b"email", 3, ["email"]):
        with pytest.raises(TypeError, match="query must be a str"):
            match_entries(catalogue, query)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tags must be a list of strings, not a single string"):
        match_entries(catalogue, "email", tags="email")
    with pytest.raises(TypeError, match="tags must hold strings, got int"):
        match_entries(catalogue, "email", tags=[1])  # type: ignore[list-item]


def test_bad_catalogues_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match="catalogue item 1 is a dict, not an McpCatalogueEntry"):
        CatalogueIndex([entry("a", "d"), {"id": "b"}])  # type: ignore[type-var]
    with pytest.raises(ValueError, match="catalogue id 'a' appears twice"):
        match_entries([entry("a", "x"), entry("b", "y"), entry("a", "z")], "x")
    index = CatalogueIndex([entry("a", "d")])
    with pytest.raises(ValueError, match="no catalogue entry has id 'zz'; known ids: a"):
        index.add_tool_names("zz", ["t"])
    with pytest.raises(ValueError, match="no catalogue entry has id 'zz'"):
        CatalogueIndex([entry("a", "d")], tool_names={"zz": ["t"]})
    with pytest.raises(TypeError, match="names must be a list of strings"):
        index.add_tool_names("a", "create_issue")


# --- properties -------------------------------------------------------------------------------

_WORDS = [
    "email", "mail", "inbox", "calendar", "meeting", "issue", "bug", "ticket", "code", "repo",
    "search", "read", "send", "files", "pages", "wiki", "payments", "deploy", "logs", "alpha",
]  # fmt: skip
_TAGS = ["email", "code", "chat", "files", "ops"]


@st.composite
def catalogues(draw: st.DrawFn) -> list[McpCatalogueEntry]:
    size = draw(st.integers(min_value=0, max_value=12))
    out = []
    for i in range(size):
        words = draw(st.lists(st.sampled_from(_WORDS), max_size=8))
        tags = draw(st.lists(st.sampled_from(_TAGS), max_size=3, unique=True))
        out.append(entry(f"e{i}", " ".join(words), name=draw(st.sampled_from(_WORDS)), tags=tags))
    return out


@settings(max_examples=150, deadline=None)
@given(
    cat=catalogues(),
    query=st.one_of(
        st.lists(st.sampled_from(_WORDS), max_size=5).map(" ".join),
        st.text(max_size=30),
    ),
    tags=st.one_of(st.none(), st.lists(st.sampled_from(_TAGS), max_size=2)),
    limit=st.integers(min_value=1, max_value=15),
)
def test_results_are_a_filtered_bounded_duplicate_free_subset(
    cat: list[McpCatalogueEntry], query: str, tags: list[str] | None, limit: int
) -> None:
    found = match_entries(cat, query, tags=tags, limit=limit)
    assert len(found) <= limit
    assert len({e.id for e in found}) == len(found)
    assert all(any(e is c for c in cat) for e in found)
    assert all(set(tags or []) <= set(e.tags) for e in found)
    # Deterministic, and the same through a kept index (built once more: the costly part).
    index = CatalogueIndex(cat)
    assert index.search(query, tags, limit) == found
    # A larger limit extends the ranking without reordering it.
    assert match_entries(index, query, tags, limit + 5)[: len(found)] == found


# --- typing errors and keywords ----------------------------------------------------------------


def test_a_misspelt_word_matches_the_catalogue_word_one_or_two_errors_away() -> None:
    cat = [
        entry("sky", "Hourly weather forecasts."),
        entry("tracker", "Create issues in Jira projects.", name="Jira"),
        entry("notes", "Personal notes."),
    ]
    assert ids(lexical(cat, "whats the wether")) == ["sky"]  # one deletion
    assert ids(lexical(cat, "creat a jria ticket"))[0] == "tracker"  # a transposition
    assert ids(lexical(cat, "forcasts hourly")) == ["sky"]
    assert ids(lexical(cat, "forcasst")) == ["sky"]  # two errors in a long word
    assert lexical(cat, "wxyz") == []  # short words are never guessed at


def test_an_exact_word_beats_a_near_one() -> None:
    cat = [entry("cards", "Trade cards."), entry("carts", "Shopping carts.")]
    assert ids(lexical(cat, "carts")) == ["carts"]
    assert ids(lexical(cat, "cartz")) == ["carts"]  # only the closest words count


def test_keywords_of_the_catalogue_author_are_ranked_with_their_own_weight() -> None:
    plain = [entry("acme", "Acme's official MCP server."), entry("other", "Team chat.")]
    assert lexical(plain, "file a bug") == []
    keyed = [
        McpCatalogueEntry(
            id="acme",
            name="Acme",
            description="Acme's official MCP server.",
            url="https://mcp.example.com/acme/mcp",
            keywords=["bug tracker", "file a bug", "sprint"],
        ),
        plain[1],
    ]
    assert ids(lexical(keyed, "file a bug")) == ["acme"]
    assert ids(lexical(keyed, "plan the sprnt")) == ["acme"]  # typos reach keywords too
    # Keywords weigh like tags, more than the description.
    cat = [
        entry("described", "Stores rows in a warehouse."),
        McpCatalogueEntry(
            id="keyed",
            name="K",
            description="Stores rows.",
            url="https://keyed.example/mcp",
            keywords=["warehouse"],
        ),
    ]
    assert ids(lexical(cat, "warehouse")) == ["keyed", "described"]


def test_tool_descriptions_learnt_make_a_server_findable_by_what_it_does() -> None:
    from glove_mcp.adapter import LearnedTool

    cat = [entry("gh", "GitHub's official MCP Server."), entry("chat", "Team chat.")]
    index = CatalogueIndex(cat, ranker=None)
    assert index.search("merge pull request") == []
    index.add_tools("gh", [LearnedTool("merge_pull_request", "Merge a pull request.")])
    assert ids(index.search("merge pull request")) == ["gh"]
    index.add_tools("gh", [LearnedTool("list_workflows", "List the Actions workflows.")])
    assert ids(index.search("workflows")) == ["gh"]
    assert index.tools("gh") == {
        "merge_pull_request": "Merge a pull request.",
        "list_workflows": "List the Actions workflows.",
    }


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ("bug", "Input should be a valid list"),
        ([""], "keyword 0 is empty"),
        (["ok", "   "], "keyword 1 is empty"),
        (["x" * 101], "keyword 0 .* has 101 characters; at most 100"),
        ([f"k{i}" for i in range(65)], "keywords holds 65 items; at most 64"),
        ([3], "valid string"),
    ],
)
def test_bad_keywords_are_refused_clearly(keywords: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        McpCatalogueEntry.model_validate(
            {"id": "a", "name": "n", "description": "d", "url": "u", "keywords": keywords}
        )


def test_keywords_of_a_foreign_catalogue_item_must_be_a_list_of_strings() -> None:
    class Item:
        def __init__(self, keywords: object) -> None:
            self.id, self.name, self.description = "x", "X", "d"
            self.tags: list[str] = []
            self.keywords = keywords

    assert ids(CatalogueIndex([Item(["widgets"])], ranker=None).search("widgets")) == ["x"]
    assert CatalogueIndex([Item(None)], ranker=None).search("widgets") == []
    with pytest.raises(TypeError, match=r"catalogue item 0 \('x'\): keywords must be a list"):
        CatalogueIndex([Item("widgets")])
    with pytest.raises(TypeError, match="keywords must hold strings, got int"):
        CatalogueIndex([Item([1])])
