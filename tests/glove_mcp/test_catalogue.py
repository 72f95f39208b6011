"""McpCatalogueEntry validation and catalogue ranking (match_entries, CatalogueIndex)."""

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


@pytest.fixture(scope="module")
def catalogue() -> list[McpCatalogueEntry]:
    raw = json.loads((DATA / "catalogue.json").read_text(encoding="utf-8"))
    return [McpCatalogueEntry.model_validate(item) for item in raw]


@pytest.fixture(scope="module")
def index(catalogue: list[McpCatalogueEntry]) -> CatalogueIndex:
    return CatalogueIndex(catalogue)


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


# --- ranking on natural phrasing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("anything new in my inbox", {"gmail", "outlook-mail"}),  # inbox -> email, mailbox
        ("a bug needs fixing", {"linear", "jira"}),  # bug -> issue, ticket
        ("put something on my agenda", {"google-calendar", "outlook-calendar"}),
        ("update the team wiki page", {"notion", "confluence"}),
        ("look at the open PRs", {"github"}),  # abbreviation -> pull request
        ("music playback", {"spotify"}),
    ],
)
def test_synonyms_and_abbreviations_reach_the_right_server(
    index: CatalogueIndex, query: str, expected: set[str]
) -> None:
    assert match_entries(index, query, limit=1)[0].id in expected


def test_inflections_meet_on_one_stem() -> None:
    cat = [
        entry("alpha", "Archive old spreadsheets."),
        entry("beta", "Schedule meetings and reply to invitations."),
    ]
    # None of these is a prefix of the catalogue's word, so only stemming can join them.
    for query in ("scheduling", "scheduled", "replied", "replies", "archiving", "archived"):
        want = ["alpha"] if query.startswith("arch") else ["beta"]
        assert ids(match_entries(cat, query)) == want, query


def test_stemming_keeps_distinct_words_apart() -> None:
    # "notes" must not become "not", "plane" must not become "plan".
    cat = [entry("planner", "Plan your week."), entry("pilot", "Book a plane seat.")]
    assert ids(match_entries(cat, "planes")) == ["pilot"]
    assert ids(match_entries(cat, "planning")) == ["planner"]


def test_unknown_word_matches_as_prefix_of_a_catalogue_word() -> None:
    # "photograph" is not a catalogue word (nor in the synonym vocabulary); "photographers" is.
    cat = [entry("studio", "Book photographers by the hour."), entry("other", "Nothing related.")]
    assert ids(match_entries(cat, "photograph")) == ["studio"]


def test_rare_terms_outweigh_common_ones() -> None:
    cat = [entry(f"filler-{i}", f"Search and read records of kind {i}.") for i in range(8)]
    cat.insert(0, entry("common", "Search, search and read everything, search again."))
    cat.append(entry("rare", "Invoices for customers."))
    # "search" appears everywhere (and three times in the first entry); "invoice" once.
    assert ids(match_entries(cat, "search invoices", limit=2)) == ["rare", "common"]


def test_name_and_tags_weigh_more_than_description() -> None:
    cat = [
        entry("mentions", "Exports can be sent to a warehouse afterwards."),
        entry("tagged", "Stores rows.", tags=["warehouse"]),
        entry("named", "Stores rows.", name="Warehouse"),
    ]
    assert ids(match_entries(cat, "warehouse")) == ["named", "tagged", "mentions"]


def test_phrase_bonus_prefers_adjacent_words() -> None:
    # Same words and lengths; only "named" has "pull requests" adjacent. It comes second in
    # the catalogue, so without the bonus the tie-break would put "scattered" first.
    cat = [
        entry("scattered", "Pull branches and review requests.", name="S"),
        entry("adjacent", "Review pull requests and branches.", name="A"),
    ]
    assert ids(match_entries(cat, "pull requests")) == ["adjacent", "scattered"]


def test_tool_names_of_servers_seen_before_are_searchable() -> None:
    cat = [entry("board", "Team workspace."), entry("other", "Something else entirely.")]
    index = CatalogueIndex(cat, tool_names={"board": ["board__move_kanban_card"]})
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
    assert ids(match_entries(cat, "text messages")) == ["twin-c", "twin-a", "twin-b"]
    assert ids(match_entries(cat[::-1], "text messages")) == ["twin-b", "twin-a", "twin-c"]
    index = CatalogueIndex(cat)
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
    for query in ("send an invoice", "who is on call", "deploy the site"):
        assert match_entries(catalogue, query) == match_entries(index, query)


def _recall(index: CatalogueIndex, *names: str) -> tuple[float, float]:
    queries = [
        json.loads(line)
        for name in names
        for line in (DATA / f"discovery-{name}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    at1 = at3 = 0
    for q in queries:
        got = ids(index.search(q["query"], limit=3))
        at1 += bool(got) and got[0] in q["accept"]
        at3 += bool(set(got) & set(q["accept"]))
    return at1 / len(queries), at3 / len(queries)


def test_public_benchmark_recall_meets_the_targets(index: CatalogueIndex) -> None:
    at1, at3 = _recall(index, "public")
    assert at1 >= 0.92
    assert at3 >= 0.98


def test_recall_on_sets_written_apart_from_the_code_meets_the_targets(
    index: CatalogueIndex,
) -> None:
    # Written by sessions that saw only the catalogue and bench/data/discovery-brief.md, and
    # never studied (bench/discovery.py, UNSEEN): a guard against losing what generalises.
    at1, at3 = _recall(index, "final", "final2", "final5", "final7", "final9", "final10")
    assert at1 >= 0.92
    assert at3 >= 0.98


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


# --- query understanding ----------------------------------------------------------------------


def test_misspelt_words_are_corrected_against_the_catalogue_and_lexicon() -> None:
    cat = [entry("sky", "Hourly weather forecasts."), entry("notes", "Personal notes.")]
    assert ids(match_entries(cat, "whats the wether")) == ["sky"]
    assert ids(match_entries(cat, "tomorow rain")) == ["sky"]  # "tomorow" is a lexicon word


def test_phrases_give_ambiguous_words_their_sense() -> None:
    cat = [
        entry("sheets", "Read and write spreadsheets.", tags=["spreadsheet"]),
        entry("books", "Bookkeeping: invoices and profit-and-loss reports.", tags=["accounting"]),
        entry("people", "Employee directory and HR records."),
    ]
    assert ids(match_entries(cat, "update the sheet", limit=1)) == ["sheets"]
    assert ids(match_entries(cat, "show the balance sheet", limit=1)) == ["books"]
    assert ids(match_entries(cat, "who reports to Dana", limit=1)) == ["people"]


def test_pasted_shapes_are_read_as_what_they_are() -> None:
    cat = [
        entry("forum", "Read posts in subreddits."),
        entry("disk", "Read and write local files."),
        entry("tracker", "Create and search issues."),
        entry("chat", "Post messages in channels."),
    ]
    assert ids(match_entries(cat, "what's new on r/python", limit=1)) == ["forum"]
    assert ids(match_entries(cat, "tidy ~/Downloads", limit=1)) == ["disk"]
    assert ids(match_entries(cat, "close ABC-123", limit=1)) == ["tracker"]
    assert ids(match_entries(cat, "post in #general", limit=1)) == ["chat"]


def test_the_topic_of_a_request_counts_less_than_the_request() -> None:
    cat = [
        entry("sms", "Send SMS text messages.", tags=["sms"]),
        entry("air", "Search flights and flight status.", tags=["flights"]),
    ]
    assert ids(match_entries(cat, "flight status")) == ["air"]
    assert ids(match_entries(cat, "text Sam that the flight is late"))[0] == "sms"


def test_words_the_lexicon_knows_are_not_read_as_prefixes() -> None:
    cat = [entry("warehouse", "Snowflake data warehouse."), entry("sky", "Weather forecasts.")]
    assert ids(match_entries(cat, "will it snow", limit=1)) == ["sky"]
    assert ids(match_entries(cat, "snowfl")) == ["warehouse"]  # unknown: still a prefix


def test_quoted_text_is_topic_and_a_place_named_with_in_wins() -> None:
    cat = [
        entry("todo", "Personal to-do lists: add and complete tasks."),
        entry("phone", "Place phone calls.", tags=["telephony"]),
        entry("drive", "Upload and share files.", name="Google Drive"),
        entry("esign", "Send contracts for e-signature."),
    ]
    assert ids(match_entries(cat, "tick off 'call the plumber'"))[0] == "todo"
    assert ids(match_entries(cat, "send a link to the contract in drive"))[0] == "drive"


def test_a_product_named_anywhere_is_favoured_but_google_as_a_verb_is_a_search() -> None:
    cat = [
        entry("esign", "Send contracts and agreements for e-signature.", name="DocuSign"),
        entry("dropbox", "Upload and share files.", name="Dropbox"),
        entry("drive", "Upload and share files in drive.", name="Google Drive"),
        entry("web", "Search the web.", name="Brave Search"),
    ]
    assert ids(match_entries(cat, "upload the signed contract pdf to dropbox"))[0] == "dropbox"
    # A camel-case part ("sign" of DocuSign) is no proper name: the contract still matters.
    assert ids(match_entries(cat, "countersign the contract"))[0] == "esign"
    assert ids(match_entries(cat, "google the error message"))[0] == "web"


def test_a_weak_camel_case_part_of_a_name_does_not_catch_everyday_words() -> None:
    cat = [
        entry("books", "Accounting: invoices, bills and profit and loss.", name="QuickBooks"),
        entry("wiki", "Encyclopedia articles on history and people.", name="Wikipedia"),
    ]
    assert ids(match_entries(cat, "quick summary of the french revolution"))[0] == "wiki"
    assert ids(match_entries(cat, "quickbooks"))[0] == "books"


def test_phrases_with_a_slot_keep_the_slot_words() -> None:
    cat = [
        entry("chat", "Send chat messages to a team.", tags=["chat"]),
        entry("design", "Design files and mockups for the whole team.", tags=["design"]),
    ]
    assert ids(match_entries(cat, "the whole team", limit=1)) == ["design"]
    assert ids(match_entries(cat, "let the whole team know", limit=1)) == ["chat"]
