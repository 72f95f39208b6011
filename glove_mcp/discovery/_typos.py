"""Typo tolerance: catalogue words within one or two typing errors of an unknown query word.

Distances are optimal string alignment (Levenshtein plus adjacent transpositions, "jria" ->
"jira" is one error), computed by rapidfuzz. Only words of four letters or more are matched,
with one error allowed up to seven letters and two beyond; only the closest matches count.
"""

from __future__ import annotations

from collections.abc import Mapping

from rapidfuzz import process
from rapidfuzz.distance import OSA

__all__ = ["TypoMatcher"]

_MIN_LENGTH = 4
_ONE_ERROR_UP_TO = 7


class TypoMatcher:
    """Finds the catalogue words a misspelt word probably meant.

    Args:
        words: each catalogue word as written (lower case) -> the stem it indexes under.
    """

    def __init__(self, words: Mapping[str, str]) -> None:
        self._stems = dict(words)
        by_length: dict[int, list[str]] = {}
        for word in self._stems:
            if len(word) >= _MIN_LENGTH - 1:
                by_length.setdefault(len(word), []).append(word)
        self._by_length = by_length

    def near(self, word: str) -> dict[str, int]:
        """The stems of the closest catalogue words to ``word``, each with its error count.

        Args:
            word: a lower-case word as typed.

        Returns:
            ``{stem: errors}``; empty for short words, known words and words with no match.
        """
        if len(word) < _MIN_LENGTH or word in self._stems or not word.isalpha():
            return {}
        most = 1 if len(word) <= _ONE_ERROR_UP_TO else 2
        found: dict[str, int] = {}
        best = most
        for length in range(len(word) - most, len(word) + most + 1):
            choices = self._by_length.get(length)
            if not choices:
                continue
            for match, errors, _ in process.extract(
                word, choices, scorer=OSA.distance, score_cutoff=most, limit=None
            ):
                errors = int(errors)
                if errors < best:
                    best, found = errors, {}
                if errors == best:
                    stem = self._stems[match]
                    found[stem] = min(found.get(stem, errors), errors)
        return found
