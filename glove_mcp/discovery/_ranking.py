"""BM25F ranking over short documents with a few weighted fields.

Knows nothing about catalogue entries: a document is a tuple of token lists, one per field
(``FIELDS``). Everything that depends only on the documents (idf, length normalisation, the
per-term weights) is computed once in the constructor, so a query costs one pass over the
posting lists of its words and their expansions into a dense score array, and a top-k pick.

Scoring, per document::

    sum over query words w of   best + rest * (sum - best)   of   factor * weight(term, doc)
                                over (term, factor) in expand(w)
  + phrase bonus for each pair of adjacent query words that is adjacent in one of its fields

``weight`` is BM25 with a field-weighted term frequency (BM25F). ``expand`` gives the word itself
(factor 1), its synonyms and hints (smaller factors) and, for a word neither the catalogue nor
the lexicon knows, the catalogue words it is a prefix of. Factors shrink further for common
words (their own occurrences only), words of several senses, and words of the query's topic
(``scales``). Scoring the best expansion in full and the
others at a fraction (``rest``) means a document that names a concept several ways ranks above
one that names it once, without letting a word with many synonyms drown out the other words.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from glove_mcp.discovery._synonyms import expand_abbreviation, expansions, is_known, word_weight

__all__ = ["FIELDS", "RankingIndex", "RankingParams", "query_tokens"]

FIELDS: tuple[str, ...] = ("name", "tags", "description", "tools")

# (document ids, weights), parallel lists in ascending id order.
_Postings = tuple[list[int], list[float]]


@dataclass(frozen=True)
class RankingParams:
    """Weights of the ranking; the defaults are what the discovery benchmark was run with."""

    field_weights: tuple[float, ...] = (3.0, 2.0, 1.0, 1.5)
    """Weight of a term occurrence per field, in ``FIELDS`` order."""
    field_b: tuple[float, ...] = (0.5, 0.5, 0.75, 0.75)
    """BM25 length normalisation per field (0 = none, 1 = full)."""
    k1: float = 1.2
    """BM25 term-frequency saturation."""
    synonym_factor: float = 0.6
    """Fraction of a term's weight a synonym match earns."""
    hint_factor: float = 0.4
    """Fraction of a term's weight a hint (broader concept) match earns."""
    prefix_factor: float = 0.5
    """Fraction earned by a catalogue term that an unknown query word is a prefix of."""
    min_prefix: int = 4
    """Shortest query word that matches as a prefix."""
    rest_factor: float = 0.25
    """Fraction earned by a query word's matches other than its best one in a document."""
    phrase_factor: float = 0.5
    """Phrase bonus as a fraction of the mean idf of the two adjacent words."""
    mention_factor: float = 1.0
    """Bonus, as a fraction of the word's idf, for an entry named where the query says to act."""
    name_factor: float = 2.0
    """Bonus, as a fraction of the word's idf, for an entry whose name holds a query word that
    is a proper name (one no general vocabulary knows, e.g. "dropbox"), wherever it stands."""
    weak_factor: float = 0.35
    """Fraction of its weight a common, weakly telling word keeps (the lexicon's weak words)."""
    content_factor: float = 0.5
    """Fraction of its weight a word of the query's topic keeps (after "about", "that", ...)."""
    polysemous_factor: float = 0.6
    """Fraction of its weight a word of several senses keeps (the lexicon's polysemous words)."""


def query_tokens(tokens: Sequence[str]) -> list[str]:
    """Insert the long forms of abbreviations after them ("pr" -> "pr", "pull", "request").

    Args:
        tokens: stems from ``tokenize``.

    Returns:
        The tokens with expansions, in order, so phrase pairs still line up.
    """
    out: list[str] = []
    for token in tokens:
        out.append(token)
        out.extend(expand_abbreviation(token))
    return out


class _Part:
    """One additive part of a query's score: a query word with its expansions, or the phrase
    bonus (a sum of ``(documents, bonus)`` pairs)."""

    __slots__ = ("pairs", "rest", "terms")

    def __init__(
        self,
        terms: list[tuple[_Postings, float]],
        rest: float,
        pairs: list[tuple[frozenset[int], float]],
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
    """

    def __init__(self, docs: Sequence[Sequence[Sequence[str]]], params: RankingParams) -> None:
        self._params = params
        self._size = len(docs)
        n_fields = len(FIELDS)
        totals = [0] * n_fields
        for doc in docs:
            for f in range(n_fields):
                totals[f] += len(doc[f])
        averages = [t / self._size if self._size else 0.0 for t in totals]

        pseudo_tf: dict[str, dict[int, float]] = {}
        pairs: dict[tuple[str, str], set[int]] = {}
        named: dict[str, set[int]] = {}
        for doc_id, doc in enumerate(docs):
            for f in range(n_fields):
                tokens = doc[f]
                if not tokens:
                    continue
                b = params.field_b[f]
                share = params.field_weights[f] / (1.0 - b + b * (len(tokens) / averages[f]))
                for token in tokens:
                    per_doc = pseudo_tf.setdefault(token, {})
                    per_doc[doc_id] = per_doc.get(doc_id, 0.0) + share
                for pair in itertools.pairwise(tokens):
                    pairs.setdefault(pair, set()).add(doc_id)
            for token in doc[0]:  # the name field
                named.setdefault(token, set()).add(doc_id)

        k1 = params.k1
        self._idf: dict[str, float] = {}
        self._postings: dict[str, _Postings] = {}
        for term, per_doc in pseudo_tf.items():
            idf = math.log(1.0 + (self._size - len(per_doc) + 0.5) / (len(per_doc) + 0.5))
            self._idf[term] = idf
            self._postings[term] = (
                list(per_doc),
                [idf * tf * (k1 + 1.0) / (tf + k1) for tf in per_doc.values()],
            )
        self._pairs = {pair: frozenset(ids) for pair, ids in pairs.items()}
        self._named = {token: frozenset(ids) for token, ids in named.items()}
        self._vocabulary = sorted(self._postings)

    def __len__(self) -> int:
        return self._size

    def __contains__(self, term: object) -> bool:
        return term in self._postings

    def rank(
        self,
        tokens: Sequence[str],
        allowed: Collection[int] | None,
        limit: int,
        scales: Mapping[str, float] | None = None,
        mentions: Collection[str] = (),
        names: Collection[str] = (),
    ) -> list[int]:
        """The ids of the best-scoring documents, best first, ties in document order.

        Args:
            tokens: query stems (see ``query_tokens``); documents need a positive score.
            allowed: only these document ids may be returned; ``None`` allows all.
            limit: at most this many ids (>= 1).
            scales: a weight share per query stem (default 1), e.g. for a topic's words.
            mentions: stems the query uses to name where to act ("in drive", "on x"); an
                entry whose name holds one earns a bonus, whatever else the word can mean.
            names: stems of query words that are proper names of entries (see
                ``RankingParams.name_factor``), wherever they stand.

        Returns:
            Document ids.
        """
        parts = self._parts(tokens, scales or {}, mentions, names)
        if not parts:
            return []
        # Dense arrays: list indexing is the cheapest per-posting step plain Python offers.
        scores = [0.0] * self._size
        scratch = [0.0] * self._size
        for part in parts:
            part.add_to(scores, scratch)
        if allowed is None:
            return _top(scores, limit)
        ids = sorted(allowed)
        return [ids[i] for i in _top([scores[d] for d in ids], limit)]

    def _parts(
        self,
        tokens: Sequence[str],
        scales: Mapping[str, float],
        mentions: Collection[str] = (),
        names: Collection[str] = (),
    ) -> list[_Part]:
        p = self._params
        parts: list[_Part] = []
        for token in dict.fromkeys(tokens):
            terms = self._expand(token)
            if not terms:
                continue
            scale = scales.get(token, 1.0)
            parts.append(
                _Part(
                    [(self._postings[term], factor * scale) for term, factor in terms.items()],
                    p.rest_factor,
                    [],
                )
            )
        pairs: list[tuple[frozenset[int], float]] = []
        for pair in dict.fromkeys(itertools.pairwise(tokens)):
            ids = self._pairs.get(pair)
            if ids:
                bonus = p.phrase_factor * (self._idf[pair[0]] + self._idf[pair[1]]) / 2.0
                pairs.append((ids, bonus))
        for token in dict.fromkeys(mentions):
            ids = self._named.get(token)
            if ids:
                pairs.append((ids, p.mention_factor * self._idf[token]))
        for token in dict.fromkeys(names):
            ids = self._named.get(token)
            if ids:
                pairs.append((ids, p.name_factor * self._idf[token]))
        if pairs:
            parts.append(_Part([], 0.0, pairs))
        return parts

    def _expand(self, token: str) -> dict[str, float]:
        """Catalogue terms a query word stands for, each with the fraction of weight it earns."""
        p = self._params
        # A weak word's own occurrences say little ("day" in "7-day forecast"), but what the
        # lexicon relates it to was written on purpose ("tomorrow" -> calendar), so only the
        # former is scaled down. A word of several senses is uncertain throughout.
        literal, related = word_weight(token, p.weak_factor, p.polysemous_factor)
        terms: dict[str, float] = {}
        if token in self._postings:
            terms[token] = literal
        elif len(token) >= p.min_prefix and not is_known(token):
            # A word the lexicon knows is whole ("snow"), not the start of another ("snowflake").
            vocabulary = self._vocabulary
            at = bisect.bisect_right(vocabulary, token)
            while at < len(vocabulary) and vocabulary[at].startswith(token):
                terms[vocabulary[at]] = p.prefix_factor * literal
                at += 1
        for term, relation in expansions(token).items():
            if term in self._postings:
                factor = p.synonym_factor if relation == "synonym" else p.hint_factor
                factor *= related
                if factor > terms.get(term, 0.0):
                    terms[term] = factor
        return terms


def _top(scores: list[float], limit: int) -> list[int]:
    """Positions of the ``limit`` largest positive scores, best first, ties by position.

    ``heapq.nlargest`` over bare floats and ``list.index`` both run in C; pairing every score
    with its position first would cost several times more at 10,000 entries.
    """
    best = [value for value in heapq.nlargest(limit, scores) if value > 0.0]
    out: list[int] = []
    for value in dict.fromkeys(best):
        at = -1
        for _ in range(best.count(value)):
            at = scores.index(value, at + 1)  # ascending, so equal scores keep their order
            out.append(at)
    return out
