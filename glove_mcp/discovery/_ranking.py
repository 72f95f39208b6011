"""BM25F ranking over short documents with a few weighted fields.

Knows nothing about catalogue entries: a document is a tuple of token lists, one per field
(``FIELDS``). Everything that depends only on the documents (idf, length normalisation, the
per-term weights) is computed once in the constructor, so a query costs one pass over the
posting lists of its words into a dense score array, and a top-k pick.

Scoring, per document::

    sum over query words w of   best + rest * (sum - best)   of   factor * weight(term, doc)
                                over (term, factor) in expand(w)
  + phrase bonus for each pair of adjacent query words that is adjacent in one of its fields

``weight`` is BM25 with a field-weighted term frequency (BM25F). ``expand`` gives the word
itself (factor 1) when the catalogue has it; otherwise the catalogue words it is a prefix of
("calend" of "calendar") and the catalogue words one or two typing errors away (``_typos``),
at smaller factors. Nothing else: no synonyms, no word lists.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from array import array
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from glove_mcp.discovery._typos import TypoMatcher

__all__ = ["FIELDS", "QueryWord", "RankingIndex", "RankingParams"]

FIELDS: tuple[str, ...] = ("name", "tags", "keywords", "description", "tools", "tool_text")
"""The fields of a document: the entry's name and id, its tags, the keywords its author gave,
its description, the names of its known tools, and those tools' descriptions."""

# (document ids, weights), parallel arrays in ascending id order: a C int and a C double an
# entry, where lists hold a pointer and a 24-byte float object (at 26,000 entries, 340,000
# postings: 9 MB less).
_Postings = tuple["array[int]", "array[float]"]


@dataclass(frozen=True)
class RankingParams:
    """Weights of the ranking; general BM25F settings, not fitted to any query set."""

    field_weights: tuple[float, ...] = (3.0, 2.0, 2.0, 1.0, 1.5, 0.5)
    """Weight of a term occurrence per field, in ``FIELDS`` order."""
    field_b: tuple[float, ...] = (0.5, 0.5, 0.5, 0.75, 0.75, 0.75)
    """BM25 length normalisation per field (0 = none, 1 = full)."""
    k1: float = 1.2
    """BM25 term-frequency saturation."""
    prefix_factor: float = 0.5
    """Fraction earned by a catalogue term that an unknown query word is a prefix of."""
    min_prefix: int = 4
    """Shortest query word that matches as a prefix."""
    typo_factor: float = 0.7
    """Fraction earned by a catalogue word one typing error from an unknown query word (half
    of it for two errors)."""
    rest_factor: float = 0.25
    """Fraction earned by a query word's matches other than its best one in a document."""
    phrase_factor: float = 0.5
    """Phrase bonus as a fraction of the mean idf of the two adjacent words."""


@dataclass(frozen=True)
class QueryWord:
    """One word of a query: its stem, and the word as typed (for typo matching)."""

    stem: str
    raw: str


class _Part:
    """One additive part of a query's score: a query word with its expansions, or the phrase
    bonus (a sum of ``(documents, bonus)`` pairs)."""

    __slots__ = ("pairs", "rest", "terms")

    def __init__(
        self,
        terms: list[tuple[_Postings, float]],
        rest: float,
        pairs: list[tuple[tuple[int, ...], float]],
    ) -> None:
        self.terms = terms
        self.rest = rest
        self.pairs = pairs

    def add_to(self, scores: list[float], scratch: list[float]) -> None:
        """Add the part's value of every document to ``scores`` (indexed by document id).

        Args:
            scores: running totals, one per document.
            scratch: a zeroed buffer as long as ``scores``; left zeroed.
        """
        for ids, bonus in self.pairs:
            for doc_id in ids:
                scores[doc_id] += bonus
        if len(self.terms) == 1:
            (doc_ids, weights), factor = self.terms[0]
            for doc_id, weight in zip(doc_ids, weights, strict=True):
                scores[doc_id] += factor * weight
            return
        # best + rest * (total - best) == (1 - rest) * best + rest * total: the total goes
        # straight into ``scores``, the best waits in ``scratch``.
        rest = self.rest
        for (doc_ids, weights), factor in self.terms:
            share = rest * factor
            for doc_id, weight in zip(doc_ids, weights, strict=True):
                scores[doc_id] += share * weight
                value = factor * weight
                if value > scratch[doc_id]:
                    scratch[doc_id] = value
        keep = 1.0 - rest
        for (doc_ids, _), _ in self.terms:
            for doc_id in doc_ids:
                value = scratch[doc_id]
                if value:
                    scores[doc_id] += keep * value
                    scratch[doc_id] = 0.0


class RankingIndex:
    """An immutable BM25F index over ``len(docs)`` documents.

    Args:
        docs: per document, one token list per field in ``FIELDS`` order.
        params: ranking weights.
        words: every word of the documents as written (lower case) -> its stem, for typos.
    """

    def __init__(
        self,
        docs: Sequence[Sequence[Sequence[str]]],
        params: RankingParams,
        words: Mapping[str, str],
    ) -> None:
        self._params = params
        self._size = len(docs)
        n_fields = len(FIELDS)
        totals = [0] * n_fields
        for doc in docs:
            for f in range(n_fields):
                totals[f] += len(doc[f])
        averages = [t / self._size if self._size else 0.0 for t in totals]

        # Built in document order, so each posting list is ascending and a repeat of the
        # current document is its last item: flat arrays (a C int and a C double a posting),
        # no dict or set per term or pair, no float object per posting (at 26,000 entries
        # those cost more memory than the index itself).
        postings: dict[str, _Postings] = {}
        pairs: dict[tuple[str, str], int | list[int] | tuple[int, ...]] = {}
        for doc_id, doc in enumerate(docs):
            for f in range(n_fields):
                tokens = doc[f]
                if not tokens:
                    continue
                b = params.field_b[f]
                share = params.field_weights[f] / (1.0 - b + b * (len(tokens) / averages[f]))
                for token in tokens:
                    posting = postings.get(token)
                    if posting is None:
                        postings[token] = (array("i", (doc_id,)), array("d", (share,)))
                    elif posting[0][-1] == doc_id:
                        posting[1][-1] += share
                    else:
                        posting[0].append(doc_id)
                        posting[1].append(share)
                for pair in itertools.pairwise(tokens):
                    seen = pairs.get(pair)
                    if seen is None:
                        pairs[pair] = doc_id  # most pairs occur once: a bare int
                    elif isinstance(seen, int):
                        if seen != doc_id:
                            pairs[pair] = [seen, doc_id]
                    elif isinstance(seen, list) and seen[-1] != doc_id:
                        seen.append(doc_id)

        # The term frequencies become BM25 weights in place.
        k1 = params.k1
        self._idf: dict[str, float] = {}
        for term, (ids, weights) in postings.items():
            idf = math.log(1.0 + (self._size - len(ids) + 0.5) / (len(ids) + 0.5))
            self._idf[term] = idf
            for at, tf in enumerate(weights):
                weights[at] = idf * tf * (k1 + 1.0) / (tf + k1)
        self._postings = postings
        # Values replaced in place: a second dict of 200,000 pairs would set the peak.
        for pair, found in pairs.items():
            if isinstance(found, list):
                pairs[pair] = tuple(found)
        self._pairs = cast("dict[tuple[str, str], int | tuple[int, ...]]", pairs)
        self._vocabulary = sorted(self._postings)
        self._typos = TypoMatcher({w: s for w, s in words.items() if s in self._postings})

    def __len__(self) -> int:
        return self._size

    def __contains__(self, term: object) -> bool:
        return term in self._postings

    def rank(
        self, words: Sequence[QueryWord], allowed: Collection[int] | None, limit: int
    ) -> list[tuple[int, float]]:
        """The best-scoring documents, best first, ties in document order.

        Args:
            words: the query's words; documents need a positive score.
            allowed: only these document ids may be returned; ``None`` allows all.
            limit: at most this many (>= 1).

        Returns:
            ``(document id, score)`` pairs.
        """
        parts = self._parts(words)
        if not parts:
            return []
        # Dense arrays: list indexing is the cheapest per-posting step plain Python offers.
        scores = [0.0] * self._size
        scratch = [0.0] * self._size
        for part in parts:
            part.add_to(scores, scratch)
        if allowed is None:
            return [(i, scores[i]) for i in _top(scores, limit)]
        ids = sorted(allowed)
        kept = [scores[d] for d in ids]
        return [(ids[i], kept[i]) for i in _top(kept, limit)]

    def _parts(self, words: Sequence[QueryWord]) -> list[_Part]:
        p = self._params
        parts: list[_Part] = []
        stems: list[str] = []
        for word in dict.fromkeys(words):
            terms = self._expand(word)
            if not terms:
                continue
            stems.append(word.stem)
            parts.append(
                _Part(
                    [(self._postings[term], factor) for term, factor in terms.items()],
                    p.rest_factor,
                    [],
                )
            )
        pairs: list[tuple[tuple[int, ...], float]] = []
        for pair in dict.fromkeys(itertools.pairwise(w.stem for w in words)):
            ids = self._pairs.get(pair)
            if ids is not None:
                bonus = p.phrase_factor * (self._idf[pair[0]] + self._idf[pair[1]]) / 2.0
                pairs.append(((ids,) if isinstance(ids, int) else ids, bonus))
        if pairs:
            parts.append(_Part([], 0.0, pairs))
        return parts

    def _expand(self, word: QueryWord) -> dict[str, float]:
        """Catalogue terms a query word stands for, each with the fraction of weight it earns."""
        p = self._params
        token = word.stem
        if token in self._postings:
            return {token: 1.0}
        terms: dict[str, float] = {}
        if len(token) >= p.min_prefix:
            vocabulary = self._vocabulary
            at = bisect.bisect_right(vocabulary, token)
            while at < len(vocabulary) and vocabulary[at].startswith(token):
                terms[vocabulary[at]] = p.prefix_factor
                at += 1
        for term, errors in self._typos.near(word.raw).items():
            factor = p.typo_factor / errors
            if factor > terms.get(term, 0.0):
                terms[term] = factor
        return terms


def _top(scores: list[float], limit: int) -> list[int]:
    """Positions of the ``limit`` largest positive scores, best first, ties by position.

    ``heapq.nlargest`` over bare floats finds the ``limit``-th best score in C; one C-level
    pass (``compress``) then picks every position at or above it, so a deep ranking (a
    plugged-in ranker asks for 100) costs about what a shallow one does, at 10,000 entries.
    """
    best = [value for value in heapq.nlargest(limit, scores) if value > 0.0]
    if not best:
        return []
    picked = list(itertools.compress(range(len(scores)), map(best[-1].__le__, scores)))
    picked.sort(key=lambda at: -scores[at])  # stable: equal scores keep their order
    return picked[:limit]
