"""The default ranker: BM25F fused with WordLlama's knowledge of words.

BM25F (``_ranking``) knows only the catalogue's words: "will I need an umbrella" shares none
with "weather forecasts". ``DefaultRanker`` adds the similarity of WordLlama static embeddings
(``static_embeddings``), fused with the lexical score by ``SemanticRanker`` (score fusion,
equal weights). ``default_ranker()`` is shared by every index, so entry embeddings are cached
once per process. If the model cannot be loaded (a broken install), it logs one warning and
ranks lexically.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence

from glove_mcp.discovery.ranker import RankingRequest
from glove_mcp.discovery.semantic import EmbeddingModel, SemanticRanker
from glove_mcp.discovery.static_embeddings import static_model

__all__ = ["DefaultRanker", "default_ranker"]

logger = logging.getLogger("glove_mcp.discovery")


class DefaultRanker:
    """The ranker ``CatalogueIndex`` uses unless told otherwise: BM25F fused with WordLlama.

    Each query's lexical ranking and its cosine similarity to every entry are fused by
    ``SemanticRanker`` (scores, equal weights). The model loads on the first query; if it
    cannot, one warning is logged and every query is ranked lexically from then on.

    Args:
        load: returns the embedding model (default: ``static_model``, the bundled WordLlama).
    """

    def __init__(self, load: Callable[[], EmbeddingModel] | None = None) -> None:
        self._load = load or static_model
        self._fused: SemanticRanker | None = None
        self._failed = False
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """False once loading the model has failed (queries are then ranked lexically)."""
        return not self._failed

    def rank(self, request: RankingRequest) -> Sequence[int]:
        """The fused ranking; the lexical one when the model could not be loaded."""
        fused = self._ranker()
        if fused is None:
            return [position for position, _ in request.lexical]
        return fused.rank(request)

    def _ranker(self) -> SemanticRanker | None:
        with self._lock:
            if self._fused is None and not self._failed:
                try:
                    # Shared by every index of the process (every session of a server).
                    self._fused = SemanticRanker(self._load(), catalogues=64)
                except Exception as exc:  # ranking goes on without the model
                    self._failed = True
                    logger.warning(
                        "discovery ranks lexically: the WordLlama model could not be loaded "
                        "(%s: %s); reinstall it with: pip install --force-reinstall wordllama",
                        type(exc).__name__,
                        exc,
                    )
            return self._fused


@functools.cache
def default_ranker() -> DefaultRanker:
    """The process's shared ``DefaultRanker`` (its entry embeddings are cached once)."""
    return DefaultRanker()
