"""``CatalogueIndex``: a server's instructions, once known, make it findable by their words
(lexically, and in the text a plugged-in ranker reads), without outranking its own name."""

from __future__ import annotations

import pytest

from glove_mcp import McpCatalogueEntry
from glove_mcp.adapter import LearnedTool
from glove_mcp.discovery import CatalogueIndex

FLEET = "Answers questions about the Zanzibar fleet handbook: call search_pages first."


def entry(id: str, description: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id=id, name=id.title(), description=description, url=f"https://{id}.example/mcp"
    )


def ids(found: list[McpCatalogueEntry]) -> list[str]:
    return [e.id for e in found]


def catalogue() -> list[McpCatalogueEntry]:
    return [entry("pages", "Notes and pages."), entry("fleet", "Notes and pages.")]


def test_instructions_make_a_server_findable_by_their_words() -> None:
    index = CatalogueIndex(catalogue(), ranker=None)
    assert index.search("zanzibar handbook") == []
    index.add_instructions("fleet", FLEET)
    assert ids(index.search("zanzibar handbook")) == ["fleet"]
    assert index.instructions("fleet") == FLEET and index.instructions("pages") == ""
    assert index.entry_text("fleet").endswith(f"Instructions: {FLEET}")
    assert "Instructions" not in index.entry_text("pages")
    # Replaced, then forgotten.
    index.add_instructions("fleet", "Ship logs.")
    assert index.search("zanzibar") == [] and ids(index.search("ship logs")) == ["fleet"]
    index.add_instructions("fleet", "")
    assert index.search("ship logs") == [] and index.entry_text("pages") == index.entry_text(
        "fleet"
    ).replace("Fleet", "Pages")


def test_instructions_given_at_construction_rank_below_the_entrys_own_words() -> None:
    named = [*catalogue(), entry("handbook", "The Zanzibar handbook.")]
    index = CatalogueIndex(named, instructions={"fleet": FLEET}, ranker=None)
    # Found by them, after the entry whose own description says it (listed last).
    assert ids(index.search("zanzibar handbook")) == ["handbook", "fleet"]
    # With the tools' descriptions: the same field, so the same words score the same.
    described = CatalogueIndex(named, ranker=None)
    described.add_tools("fleet", [LearnedTool("search_pages", FLEET)])
    assert ids(described.search("zanzibar handbook")) == ["handbook", "fleet"]


def test_bad_instructions_are_refused_clearly() -> None:
    index = CatalogueIndex(catalogue(), ranker=None)
    with pytest.raises(TypeError, match="instructions of 'fleet' must be a str, got int"):
        index.add_instructions("fleet", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no catalogue entry has id 'nope'"):
        index.add_instructions("nope", FLEET)
    with pytest.raises(ValueError, match="no catalogue entry has id 'nope'"):
        CatalogueIndex(catalogue(), instructions={"nope": FLEET}, ranker=None)
    assert index.instructions("fleet") == ""  # nothing half-learnt
