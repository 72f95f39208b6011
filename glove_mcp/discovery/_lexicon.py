"""The general-purpose vocabulary of catalogue ranking, read from ``data/lexicon.toml``.

The word lists are data, kept in a TOML file shipped in the package (comments there say why
each entry exists); ``lexicon()`` reads and checks it once, on first use, and every later call
returns the same frozen ``Lexicon``. ``glove_mcp.discovery._synonyms`` stems it.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["Lexicon", "lexicon", "parse_lexicon"]

_FILE = ("data", "lexicon.toml")


@dataclass(frozen=True)
class Lexicon:
    """The tables of ``data/lexicon.toml`` (its header describes each)."""

    synonym_groups: tuple[str, ...]
    """Words naming the same thing, one group per string; each reaches every other."""
    hints: tuple[tuple[str, str], ...]
    """(cue words, concept words): a cue points at every name of the concept, one way."""
    abbreviations: tuple[tuple[str, str], ...]
    """(short form, long form)."""
    phrases: tuple[tuple[str, str], ...]
    """(multi-word expression, gloss read instead of its words); ``*`` stands for 1-3 words."""
    content_markers: str
    """Words after which a request names its topic."""
    that_clause_starts: str
    """Words after which "that" starts a topic (as a conjunction)."""
    polysemous_words: str
    """Words of several unrelated senses across services."""
    weak_words: str
    """Common words that seldom tell services apart."""


def _words(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"lexicon.toml: {key} must be a string of words")
    return value


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"lexicon.toml: {key} must be a list of strings")
    return tuple(value)


def _pairs(data: dict[str, Any], key: str) -> tuple[tuple[str, str], ...]:
    value = data.get(key)
    if not isinstance(value, list):
        raise ValueError(f"lexicon.toml: {key} must be a list of [from, to] pairs")
    pairs: list[tuple[str, str]] = []
    for i, pair in enumerate(value):
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise ValueError(f"lexicon.toml: {key}[{i}] must be a [from, to] pair of strings")
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def parse_lexicon(text: str) -> Lexicon:
    """A ``Lexicon`` from the text of a lexicon file.

    Raises:
        ValueError: the text is not TOML, or a table is missing or of the wrong shape.
    """
    data = tomllib.loads(text)
    return Lexicon(
        synonym_groups=_strings(data, "synonym_groups"),
        hints=_pairs(data, "hints"),
        abbreviations=_pairs(data, "abbreviations"),
        phrases=_pairs(data, "phrases"),
        content_markers=_words(data, "content_markers"),
        that_clause_starts=_words(data, "that_clause_starts"),
        polysemous_words=_words(data, "polysemous_words"),
        weak_words=_words(data, "weak_words"),
    )


@functools.cache
def lexicon() -> Lexicon:
    """The package's lexicon, read on the first call (a few milliseconds, like importing a
    module) and shared afterwards."""
    source = resources.files(__package__).joinpath(*_FILE)
    return parse_lexicon(source.read_text(encoding="utf-8"))
