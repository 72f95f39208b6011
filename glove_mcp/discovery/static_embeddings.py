"""WordLlama static embeddings: general knowledge of English words, on numpy alone.

BM25F (``_ranking``) knows only the catalogue's words: "will I need an umbrella" shares none
with "weather forecasts". The default ranker adds general knowledge of English from a
maintained resource, WordLlama (MIT; github.com/dleemiller/WordLlama): a table of token
embeddings distilled from large language models, whose 256-dimensional ``l2_supercat``
weights (16 MB) ship inside the ``wordllama`` wheel. A text's vector is the mean of its
tokens' vectors, so embedding a query is a table look-up (well under a millisecond), on
numpy alone: no model framework, nothing downloaded.

The default ranker (``glove_mcp.discovery.default``) fuses that similarity with the lexical
score; the ``glove-agents[semantic]`` extra combines it with all-MiniLM-L6-v2.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MAX_TOKENS", "WordLlamaModel", "load_wordllama", "static_model", "unit_rows"]

MAX_TOKENS = 256
"""How many tokens of a text are embedded: the window all-MiniLM-L6-v2 reads too (its
``max_seq_length``), so both models see an entry's own words and its first tools, and a
server with hundreds of known tools is not averaged into a blur."""


_BATCH = 32
"""Texts embedded at a time. WordLlama gathers a (batch, longest text, 256) float32 block
per batch; at its default of 64 texts of up to 256 tokens that is 16 MB, and two of them
(the gather and the pooling) stayed resident after a 26,000-entry catalogue was embedded.
At 32 the process ends 14 MB smaller, with identical vectors and no measurable cost."""

_NORM_ROWS = 2_048
"""Rows normalised at a time (a 2 MB temporary at 256 dimensions)."""

_TOKEN_CACHE = 1_000
"""Words the tokenizer's BPE cache keeps (see ``load_wordllama``)."""


class WordLlamaModel:
    """A loaded WordLlama model as an ``EmbeddingModel`` (unit-length float32 rows)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        with self._lock:
            vectors = np.asarray(
                self._model.embed(list(texts), batch_size=_BATCH), dtype=np.float32
            )
        # In place and a block of rows at a time: the model's fresh array is ours, and
        # ``norm`` squares its whole input into a temporary (a copy would double the peak of
        # a large catalogue's vectors: 27 MB at 26,000 entries). Row by row, the sums are the
        # same as over the whole array.
        for start in range(0, len(vectors), _NORM_ROWS):
            block = vectors[start : start + _NORM_ROWS]
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            norms[norms == 0.0] = 1.0
            block /= norms
        return vectors


def unit_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``vectors`` with each row scaled to length 1 (a zero row, a text of no known token,
    stays zero)."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return vectors / norms  # type: ignore[no-any-return]


def load_wordllama(*, max_tokens: int = MAX_TOKENS) -> WordLlamaModel:
    """Load WordLlama's ``l2_supercat`` 256-dimensional model from the ``wordllama`` package.

    Never downloads: the weights and the tokenizer are read from the installed package
    (``disable_download=True``; its own lookup of the bundled tokenizer misses, so the package
    folder is given as the cache folder, where it finds both).

    Args:
        max_tokens: the longest text, in tokens, that is embedded; the rest is cut.

    Raises:
        ImportError: ``wordllama`` is not installed.
        FileNotFoundError: the package lacks its bundled weights or tokenizer.
        ValueError: ``max_tokens`` is below 1.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be an int >= 1, got {max_tokens!r}")
    import wordllama

    model = wordllama.WordLlama.load(
        cache_dir=Path(wordllama.__file__).parent, disable_download=True
    )
    model.tokenizer.enable_truncation(max_length=max_tokens)
    # The tokenizer's BPE word cache keeps 10,000 words by default and grew the process by
    # about 70 MB while a 25,000-entry catalogue was embedded (measured, tokenizers 0.23);
    # 1,000 words keep that to about 10 MB at no measurable cost in speed. The resize is an
    # underscored method of the tokenizers binding: used when present, skipped otherwise.
    resize = getattr(model.tokenizer.model, "_resize_cache", None)
    if callable(resize):
        # An older or newer binding may refuse it: the default cache is only bigger.
        with contextlib.suppress(Exception):
            resize(_TOKEN_CACHE)
    return WordLlamaModel(model)


@functools.cache
def static_model() -> WordLlamaModel:
    """The bundled WordLlama model, loaded once per process (every ranker shares it)."""
    return load_wordllama()
