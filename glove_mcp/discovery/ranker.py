"""The ranking seam: plug another ranker (an embedding model, a remote search) into discovery.

``CatalogueIndex`` always ranks lexically first (BM25F). Given ``ranker=``, it then hands a
``RankingRequest`` — the query, the catalogue, one text per entry, and the lexical ranking —
to the ranker, which returns entry positions, best first. ``fuse_rankings`` (reciprocal rank
fusion) is the usual way to combine a ranker's own order with the lexical one.

Pass a ranker where discovery ranks: ``CatalogueIndex(entries, ranker=...)`` (and so
``match_entries(index, ...)``), or ``mount_mcp(..., discovery_ranker=...)`` for the
``find_capability`` subagent. ``glove_mcp.discovery.semantic.SemanticRanker`` (the
``glove-agents[semantic]`` extra) is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["RRF_K", "CatalogueRanker", "RankingRequest", "fuse_rankings"]

RRF_K = 60
"""The constant of reciprocal rank fusion (Cormack et al. 2009): ``1 / (k + rank)``."""


@dataclass(frozen=True)
class RankingRequest:
    """What a ranker is given for one query.

    Attributes:
        query: the need, as the caller wrote it (not empty).
        ids: the catalogue ids, in catalogue order; a position is an index into it.
        texts: per entry, what discovery knows of it as one text: name, description, tags,
            keywords and the names and descriptions of its known tools.
        catalogue_key: a digest of ``ids`` and ``texts``: equal keys mean the same catalogue
            content, so a ranker can cache what it derives from the texts under it.
        lexical: the lexical ranking, ``(position, score)`` best first (at most
            ``lexical_depth`` of them, positive scores only, possibly none).
        allowed: the positions a tag filter allows, or None for all.
        limit: how many positions the caller wants.
    """

    query: str
    ids: Sequence[str]
    texts: Sequence[str]
    catalogue_key: str
    lexical: Sequence[tuple[int, float]]
    allowed: frozenset[int] | None
    limit: int


@runtime_checkable
class CatalogueRanker(Protocol):
    """Ranks a catalogue for a query. Implement ``rank``; nothing else is required.

    It must be fast (it runs on every query) and must not change the request. Positions it
    returns outside ``allowed`` or past ``limit`` are dropped; repeats, non-ints and positions
    outside the catalogue raise ``ValueError`` in ``CatalogueIndex.search``.
    """

    def rank(self, request: RankingRequest) -> Sequence[int]:
        """Entry positions (indexes into ``request.ids``), best first."""
        ...


def fuse_rankings(*rankings: Sequence[int], weights: Sequence[float] | None = None) -> list[int]:
    """Reciprocal rank fusion: each ranking gives ``weight / (RRF_K + rank)`` to each of its
    positions (rank 1 first); positions are returned by their summed score, best first, ties
    in the order of first appearance.

    Args:
        rankings: positions, best first, one sequence per ranker.
        weights: one per ranking (default 1 each).

    Returns:
        Every position that appears in any ranking.

    Raises:
        ValueError: ``weights`` is not as long as ``rankings``.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"weights has {len(weights)} values for {len(rankings)} rankings")
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, position in enumerate(ranking, start=1):
            scores[position] = scores.get(position, 0.0) + weight / (RRF_K + rank)
    return sorted(scores, key=lambda p: -scores[p])
