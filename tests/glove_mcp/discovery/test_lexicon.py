"""The lexicon's word lists (glove_mcp/discovery/data/lexicon.toml), read by
glove_mcp.discovery._lexicon: shipped in the package, read once, and a malformed file is
refused with a message naming the table."""

from __future__ import annotations

from importlib import resources

import pytest

from glove_mcp.discovery._lexicon import lexicon, parse_lexicon
from glove_mcp.discovery._synonyms import lexicon_size

GOOD = """
synonym_groups = ["email mail inbox"]
hints = [["umbrella raincoat", "weather"]]
abbreviations = [["pr", "pull request"]]
phrases = [["balance sheet", "accounting report"]]
content_markers = "about for"
that_clause_starts = "the a"
polysemous_words = "server sheet"
weak_words = \"\"\"\\
    new old \\
    day\"\"\"
"""


def test_the_file_ships_in_the_package_and_is_read_once() -> None:
    data = resources.files("glove_mcp.discovery").joinpath("data", "lexicon.toml")
    assert data.is_file()
    assert lexicon() is lexicon()
    size = lexicon_size()
    assert size["synonym_groups"] == len(lexicon().synonym_groups) > 50
    assert size["phrases"] == len(lexicon().phrases) > 100


def test_a_well_formed_file_gives_every_table() -> None:
    lex = parse_lexicon(GOOD)
    assert lex.synonym_groups == ("email mail inbox",)
    assert lex.hints == (("umbrella raincoat", "weather"),)
    assert lex.abbreviations == (("pr", "pull request"),)
    assert lex.phrases == (("balance sheet", "accounting report"),)
    assert lex.weak_words == "new old day"  # continued lines are joined


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("hints = [[", "hints = [[1, "), r"hints\[0\] must be a \[from, to\] pair"),
        (('hints = [["umbrella raincoat", "weather"]]', "hints = 3"), "hints must be a list"),
        (('synonym_groups = ["email mail inbox"]', "synonym_groups = [1]"), "list of strings"),
        (('content_markers = "about for"', ""), "content_markers must be a string"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_table(
    change: tuple[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse_lexicon(GOOD.replace(*change, 1))


def test_text_that_is_not_toml_is_refused() -> None:
    with pytest.raises(ValueError, match="Invalid value"):
        parse_lexicon("synonym_groups = [")


def test_a_speller_on_a_base_knows_both_and_adds_their_counts() -> None:
    from glove_mcp.discovery._spelling import Speller

    base = Speller(["calendar", "calendar", "colander"])
    layered = Speller(["colander", "colander"], base=base)
    flat = Speller(["calendar", "calendar", "colander", "colander", "colander"])
    assert "calendar" in layered and "colander" in layered and "banana" not in layered
    for word in ("calender", "colandar", "calnedar", "xyzzyx"):
        assert layered.correct(word) == flat.correct(word)
