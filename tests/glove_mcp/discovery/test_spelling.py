"""One-edit spelling correction for catalogue queries (glove_mcp.discovery._spelling.Speller)."""

from __future__ import annotations

import pytest

from glove_mcp.discovery._spelling import Speller

VOCABULARY = [
    "calendar",
    "weather",
    "emails",
    "playlist",
    "tables",
    "logging",
    "give",
    "search",
    "stripe",
]


@pytest.mark.parametrize(
    ("typo", "want"),
    [
        ("wether", "weather"),  # a dropped letter
        ("emials", "emails"),  # two neighbours swapped
        ("calender", "calendar"),  # a changed letter in a long word
        ("playlst", "playlist"),
        ("searchh", "search"),  # an added letter
    ],
)
def test_one_edit_typos_are_corrected(typo: str, want: str) -> None:
    assert Speller(VOCABULARY).correct(typo) == want


@pytest.mark.parametrize(
    "word", ["tablet", "jogging", "given", "chek", "weather", "pm2.5", "zzzzzz", "strip"]
)
def test_real_words_short_words_and_known_words_are_left_alone(word: str) -> None:
    # "tablet"/"tables" and "jogging"/"logging" differ by a changed letter in a short word,
    # "given" is "give" plus a letter, "strip" is "stripe" short of its last letter: all real
    # words, so none is corrected.
    assert Speller(VOCABULARY).correct(word) is None


def test_ties_go_to_the_more_frequent_word_then_alphabetical() -> None:
    assert Speller(["carts", "parts", "parts"]).correct("arts") is None  # too short
    assert Speller(["planet", "planes", "planes"], min_substitution=6).correct("planex") == "planes"
    assert Speller(["planet", "planes"], min_substitution=6).correct("planex") == "planes"
    assert "planet" in Speller(["planet"])
