"""Issue 17: the default ranker fuses BM25F with WordLlama's general knowledge of words.

The model is the real one that the ``wordllama`` wheel ships (a default dependency); nothing
is downloaded, which the first test proves by making every HTTP request fail.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from glove_mcp import CatalogueIndex, McpCatalogueEntry, match_entries
from glove_mcp.discovery.default import DefaultRanker, default_ranker
from glove_mcp.discovery.semantic import CombinedModel, SemanticRanker
from glove_mcp.discovery.static_embeddings import MAX_TOKENS, load_wordllama, static_model


def entry(id: str, description: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id=id, name=id.title(), description=description, url=f"https://{id}.example/mcp"
    )


CATALOGUE = [
    entry("tracker", "Issue tracking for software teams: bugs, sprints and roadmaps."),
    entry("sky", "Current conditions and forecasts for any city."),
    entry("ledger", "Invoices, payments and profit-and-loss reports for small businesses."),
]


def ids(entries: Sequence[McpCatalogueEntry]) -> list[str]:
    return [e.id for e in entries]


def test_the_bundled_model_loads_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a download was attempted: {args!r}")

    monkeypatch.setattr(requests.Session, "request", refuse)
    model = load_wordllama()
    vectors = model.embed(["will it rain tomorrow", "weather forecast", "send an invoice"])
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    assert np.allclose((vectors**2).sum(axis=1), 1.0, atol=1e-5)
    rain, weather, invoice = vectors
    assert float(rain @ weather) > float(rain @ invoice) + 0.2
    assert static_model() is static_model()  # loaded once per process


def test_texts_are_cut_at_the_token_window() -> None:
    model = static_model()
    head = "weather forecasts and radar for any city " * 40  # well past MAX_TOKENS tokens
    a, b = model.embed([head + "payments invoices " * 50, head + "kanban sprints " * 50])
    assert np.allclose(a, b)
    short = load_wordllama(max_tokens=4).embed(["weather forecasts and radar maps"])[0]
    assert not np.allclose(short, model.embed(["weather forecasts and radar maps"])[0])
    assert MAX_TOKENS == 256
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="max_tokens must be an int >= 1"):
            load_wordllama(max_tokens=bad)  # type: ignore[arg-type]


def test_a_need_that_shares_no_word_with_its_server_is_found() -> None:
    assert CatalogueIndex(CATALOGUE, ranker=None).search("will i need an umbrella") == []
    assert ids(match_entries(CATALOGUE, "will i need an umbrella", limit=1)) == ["sky"]
    # The lexical score still counts: the one entry that names the word comes first.
    assert ids(match_entries(CATALOGUE, "profit-and-loss", limit=1)) == ["ledger"]
    # Tags still filter, and a query of stop words alone lists the catalogue in order.
    assert match_entries(CATALOGUE, "will i need an umbrella", tags=["none"]) == []
    assert ids(match_entries(CATALOGUE, "the of and")) == ["tracker", "sky", "ledger"]


def test_the_default_is_one_shared_ranker_and_none_means_lexical() -> None:
    index = CatalogueIndex(CATALOGUE)
    assert isinstance(index.ranker, DefaultRanker)
    assert index.ranker is default_ranker() is CatalogueIndex(CATALOGUE, ranker="default").ranker
    assert CatalogueIndex(CATALOGUE, ranker=None).ranker is None


def test_a_model_that_cannot_load_leaves_lexical_ranking_and_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []

    def broken() -> Any:
        calls.append(1)
        raise OSError("weights file is truncated")

    ranker = DefaultRanker(load=broken)
    index = CatalogueIndex(CATALOGUE, ranker=ranker)
    lexical = CatalogueIndex(CATALOGUE, ranker=None)
    with caplog.at_level(logging.WARNING, logger="glove_mcp.discovery"):
        for query in ("forecasts", "bugs and sprints", "will i need an umbrella"):
            assert index.search(query) == lexical.search(query)
    assert not ranker.available and calls == [1]  # tried once, not on every query
    (record,) = caplog.records
    assert "ranks lexically" in record.getMessage()
    assert "OSError: weights file is truncated" in record.getMessage()
    assert "pip install --force-reinstall wordllama" in record.getMessage()


def test_a_changed_entry_alone_is_embedded_again() -> None:
    ranker = SemanticRanker(static_model())
    first = CatalogueIndex(CATALOGUE, ranker=ranker)
    first.search("forecasts")
    assert ranker.embedded == 3
    changed = [*CATALOGUE[:2], entry("ledger", "Bookkeeping and tax returns.")]
    CatalogueIndex(changed, ranker=ranker).search("forecasts")
    assert ranker.embedded == 4


class Evicting:
    """A model whose embedding call lets another query run first, one that evicts every
    cached vector (what a second thread can do between this call's two locked steps)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.during: Any = None

    def embed(self, texts: Sequence[str]) -> Any:
        during, self.during = self.during, None
        if during is not None:
            during()
        return self.inner.embed(texts)


def test_vectors_evicted_by_another_query_meanwhile_are_not_lost() -> None:
    model = Evicting(static_model())
    ranker = SemanticRanker(model, cache_size=1, catalogues=1)
    CatalogueIndex(CATALOGUE, ranker=ranker).search("forecasts")  # all three cached (at least)
    grown = [*CATALOGUE, entry("mail", "Send and read email.")]
    other = [entry("x", "Stock quotes."), entry("y", "Recipes.")]
    # While the grown catalogue embeds its one new entry, a query on another catalogue
    # evicts the three vectors it took from the cache.
    model.during = lambda: CatalogueIndex(other, ranker=ranker).search("quotes")
    found = CatalogueIndex(grown, ranker=ranker).search("send an email", limit=1)
    assert ids(found) == ["mail"]


class Fixed:
    """An embedding model with given vectors per text (unit length)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}

    def embed(self, texts: Sequence[str]) -> Any:
        rows = np.vstack([self.table[t] for t in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_combined_model_gives_the_weighted_mean_of_its_models_cosines() -> None:
    one = Fixed({"a": [1, 0, 0], "b": [0.6, 0.8, 0]})
    two = Fixed({"a": [0, 1], "b": [1, 1]})
    combined = CombinedModel([one, two], weights=[3, 1])
    a, b = combined.embed(["a", "b"])
    cos_one = float(one.embed(["a"])[0] @ one.embed(["b"])[0])
    cos_two = float(two.embed(["a"])[0] @ two.embed(["b"])[0])
    assert float(a @ b) == pytest.approx(0.75 * cos_one + 0.25 * cos_two, abs=1e-6)
    assert np.allclose(np.linalg.norm(combined.embed(["a", "b"]), axis=1), 1.0)
    with pytest.raises(ValueError, match="at least one model"):
        CombinedModel([])
    with pytest.raises(ValueError, match="weights has 1 values for 2 models"):
        CombinedModel([one, two], weights=[1])
    for bad in ([1, 0], [1, -2], [1, True]):
        with pytest.raises(ValueError, match="weights must be numbers > 0"):
            CombinedModel([one, two], weights=bad)


@settings(max_examples=60, deadline=None)
@given(
    similarities=st.lists(
        st.sampled_from([-0.5, 0.0, 0.1, 0.25, 0.5, 0.9]), min_size=1, max_size=40
    ),
    limit=st.integers(min_value=1, max_value=50),
    allowed_every=st.sampled_from([None, 2, 3]),
)
def test_the_fused_order_is_a_stable_sort_of_the_fused_scores(
    similarities: list[float], limit: int, allowed_every: int | None
) -> None:
    # Many equal values: ties must keep catalogue order, as a stable full sort would.
    size = len(similarities)
    table = {"q": [1.0, 0.0]}
    for i, s in enumerate(similarities):
        table[f"t{i}"] = [s, float(np.sqrt(1 - s * s))]
    from glove_mcp.discovery.ranker import RankingRequest

    allowed = None if allowed_every is None else frozenset(range(0, size, allowed_every))
    request = RankingRequest(
        query="q",
        ids=[f"e{i}" for i in range(size)],
        texts=[f"t{i}" for i in range(size)],
        catalogue_key=repr(similarities),
        lexical=[],
        allowed=allowed,
        limit=limit,
    )
    got = SemanticRanker(Fixed(table), depth=limit).rank(request)
    sim = np.asarray(similarities)
    spread = float(sim.std()) or 1.0
    z = (sim - sim.mean()) / spread
    z = z / max(float(z.max()), 1e-9)
    want = [int(i) for i in np.argsort(-z, kind="stable") if allowed is None or i in allowed]
    assert got == want[:limit]
