"""Typo tolerance for catalogue queries: one-edit corrections against a known vocabulary.

People type "calender", "tomorow", "emials" and "playlst". A query word that the index and the
lexicon do not know is replaced by a known word one edit away (Damerau: one letter dropped,
added, swapped with its neighbour, or changed). Short words are left alone: at four letters and
below almost every edit lands on another real word. A changed letter needs a longer word still
(``min_substitution``), because "tablet"/"tables" and "jogging"/"logging" are different words,
and so does an added one ("given" is not a misspelt "give"); a dropped or swapped letter rarely
makes another word, unless it is the last one ("strip" is not a misspelt "stripe"). The first
letter must stay (or swap with the second): "iphone" is a brand, not a misspelt "phone".

Lookups use a deletion index (every known word under each of its one-letter deletions), so a
query word costs a few dictionary probes however large the vocabulary is. A speller can sit on
a ``base`` one and add words to it: the lexicon's words (thousands, the same for every index)
are indexed once, and each catalogue index adds only its own (building the lexicon's part
costs about 20 ms).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Speller"]


class Speller:
    """Corrects a word to a known word at Damerau distance one.

    Args:
        vocabulary: the known words (lower case); each word's count breaks ties between
            candidates, so pass words with repeats, as they occur.
        min_length: shortest word that is corrected at all.
        min_substitution: shortest word that is corrected by changing a letter.
    """

    def __init__(
        self,
        vocabulary: Iterable[str],
        *,
        min_length: int = 5,
        min_substitution: int = 8,
        base: Speller | None = None,
    ) -> None:
        self._min_length = min_length
        self._min_substitution = min_substitution
        self._base = base
        self._own: dict[str, int] = {}
        for word in vocabulary:
            if word.isalpha():
                self._own[word] = self._own.get(word, 0) + 1
        self._own_deletions: dict[str, list[str]] = {}
        for word in sorted(self._own):
            if len(word) >= min_length - 1:
                for variant in _deletions(word):
                    self._own_deletions.setdefault(variant, []).append(word)

    def __contains__(self, word: object) -> bool:
        return word in self._own or (self._base is not None and word in self._base)

    def _count(self, word: str) -> int:
        """How often ``word`` was seen, here and in the base (0: unknown)."""
        below = self._base._count(word) if self._base is not None else 0
        return self._own.get(word, 0) + below

    def _spelt_from(self, variant: str) -> Iterable[str]:
        """The known words that become ``variant`` when one letter is dropped."""
        yield from self._own_deletions.get(variant, ())
        if self._base is not None:
            yield from self._base._spelt_from(variant)

    def correct(self, word: str) -> str | None:
        """The known word ``word`` most likely stands for, or ``None``.

        Args:
            word: a lower-case word.

        Returns:
            ``None`` when the word is known, too short, not alphabetic or has no known word
            one edit away; else the candidate seen most often (ties: alphabetical).
        """
        if word in self or len(word) < self._min_length or not word.isalpha():
            return None
        candidates: set[str] = set()
        for known in self._spelt_from(word):  # the user dropped a letter
            # ... but not the last one: a word one letter short of another at its end is
            # usually a word of its own ("strip"/"stripe", "plan"/"plane", "star"/"stare").
            if known[:-1] != word:
                candidates.add(known)
        for variant in _deletions(word):
            if variant in self and len(word) > self._min_length:  # added a letter
                candidates.add(variant)
            for known in self._spelt_from(variant):  # swapped or changed a letter
                if len(known) == len(word) and _one_edit(word, known, self._min_substitution):
                    candidates.add(known)
        # People rarely get the first letter wrong, and an "edit" there is usually another word
        # ("iphone" is not a misspelt "phone"); a swap of the first two letters still counts.
        candidates = {k for k in candidates if k[0] == word[0] or k[:2] == word[1::-1]}
        if not candidates:
            return None
        return min(candidates, key=lambda known: (-self._count(known), known))


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _one_edit(word: str, known: str, min_substitution: int) -> bool:
    """Equal-length words that differ by one adjacent swap, or one change if long enough."""
    diff = [i for i, (a, b) in enumerate(zip(word, known, strict=True)) if a != b]
    if len(diff) == 1:
        return len(word) >= min_substitution
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and word[diff[0]] == known[diff[1]]
        and word[diff[1]] == known[diff[0]]
    )
