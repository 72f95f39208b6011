"""Discovery ranking benchmark: recall by kind, beside plain BM25 and the embedding option.

Run: ``python bench/discovery.py`` (the development sets), or on any sealed set::

    python bench/discovery.py --catalogue PATH --queries PATH [--tools PATH]

Rankers, measured in the same run over the same catalogue:

- ``bm25``: plain BM25 (bm25s, Snowball stems from PyStemmer) over each entry's name, id,
  description, tags, keywords and known tool names as one text: the baseline.
- ``lexical``: ``CatalogueIndex(ranker=None)``: BM25F with typos, keywords and learned tools,
  no embeddings (the default before WordLlama was fused in).
- ``default``: ``CatalogueIndex`` / ``match_entries`` as shipped: that BM25F fused with
  WordLlama static embeddings.
- ``semantic``: ``CatalogueIndex(ranker=SemanticRanker())``, the ``glove-agents[semantic]`` extra
  (skipped, and said so, when the extra is not installed).

A query counts at k when one of its ``accept`` ids is among the first k results. Queries are
grouped by their ``kind`` field (the file's name when they have none). Only aggregates are
printed: a held-out file's queries are never shown. ``--misses`` lists the missed queries of
the development sets only, and is refused with ``--queries``.

Development sets (the default): ``bench/data/catalogue.json`` (60 servers) and every
``bench/data/discovery-*.jsonl`` set; all of them have been studied while the project's
earlier, query-tuned lexicon was written, so they are development data, not estimates for
unseen queries. The held-out set ``bench/data/realistic`` (282 real servers, 292 blind
queries by kind, tools of 41 servers) is measured with its own flags; see its README.

Latency: the median per query of each ranker over the measured catalogue (from the recall
pass), and ``match_entries(entries, query)`` with a plain list (the documented call, so its
index cache is what is measured) over a synthetic catalogue of ``--size`` entries (10,000):
each entry's description is 8-22 words drawn at random (seed 7) from the measured
catalogue's descriptions, with 1-4 of its tags and an invented brand name.

Held-out measurements (each ranker once per set, on frozen code; nobody has read the misses)
on this 2-core machine, load average about 3.5 (another engineer's test suite ran)::

    python bench/discovery.py --catalogue bench/data/realistic/catalogue.json \
        --queries bench/data/realistic3/queries.jsonl --tools bench/data/realistic/tools.json

At commit 16dac61 (WordLlama fused into the default; semantic = MiniLM + WordLlama), realistic3
(437 queries, its first measurement)::

    ranker    kind              n     r@1     r@3    r@10    med ms
    bm25      all             437   0.570   0.716   0.801      0.12
    lexical   all             437   0.632   0.785   0.840      0.13
    default   all             437   0.659   0.803   0.892      0.49
    default   ambiguous        68   0.412   0.588   0.794
    default   non-native       52   0.673   0.865   0.904
    default   task            148   0.541   0.696   0.811
    default   typo             51   0.784   0.941   1.000
    default   vendor          118   0.890   0.975   1.000
    semantic  all             437   0.712   0.828   0.918     18.15
    semantic  ambiguous        68   0.471   0.647   0.794
    semantic  non-native       52   0.769   0.885   0.923
    semantic  task            148   0.581   0.716   0.885
    semantic  typo             51   0.843   0.961   0.980
    semantic  vendor          118   0.932   0.992   1.000

Same commit, r@1 / r@3 / r@10 (all queries): realistic2 (313): bm25 0.498 / 0.633 / 0.703,
lexical 0.559 / 0.671 / 0.780, default 0.594 / 0.703 / 0.866, semantic 0.633 / 0.770 / 0.898;
realistic (292): bm25 0.640 / 0.729 / 0.818, lexical 0.688 / 0.795 / 0.860, default
0.702 / 0.836 / 0.935, semantic 0.726 / 0.863 / 0.945. Earlier, at commit b49e9a3 (lexical
default; semantic = MiniLM alone), realistic: semantic 0.723 / 0.863 / 0.935; realistic2:
semantic 0.636 / 0.789 / 0.891. The documented call at 10,000 entries measured 6.5 ms in
those runs; the cache's one-pass check of the previous catalogue (next commit, rankings
unchanged) brought it to 3.3 ms median on the development queries.

Targets (issue 17): default r@1 >= 0.80, r@3 >= 0.90; semantic r@1 >= 0.88, r@3 >= 0.95.
Missed by both. (The documented call's wall median was 2.8-3.0 ms in earlier runs over the
development queries on the same machine; under load its CPU time is the steadier figure.)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from glove_mcp import CatalogueIndex, McpCatalogueEntry, match_entries
from glove_mcp.adapter import LearnedTool
from glove_mcp.discovery._text import tokenize
from glove_mcp.discovery.semantic import SemanticRanker, semantic_available

__all__ = ["main"]

DATA = Path(__file__).parent / "data"
TARGETS = {"default": (0.80, 0.90, 5.0), "semantic": (0.88, 0.95, 50.0)}
"""Per ranker: r@1, r@3 and median milliseconds per query (issue 17)."""

_ENTRY_FIELDS = ("id", "name", "description", "url", "tags", "keywords", "command")

Ranker = Callable[[str], list[str]]


@dataclass(frozen=True)
class Query:
    """One benchmark query."""

    text: str
    accept: frozenset[str]
    kind: str


def load_catalogue(path: Path) -> list[McpCatalogueEntry]:
    """Catalogue entries from a JSON list; fields the entry model lacks (``source``) are
    dropped, and an entry without ``url`` or ``command`` gets a placeholder url."""
    out: list[McpCatalogueEntry] = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        fields = {k: v for k, v in item.items() if k in _ENTRY_FIELDS}
        if not fields.get("url") and not fields.get("command"):
            fields["url"] = f"https://mcp.example.com/{fields['id']}/mcp"
        out.append(McpCatalogueEntry.model_validate(fields))
    return out


def load_tools(path: Path | None) -> dict[str, list[LearnedTool]]:
    """Known tools per id: ``{id: [{"name": ..., "description": ...}, ...]}``."""
    if path is None:
        return {}
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        id: [LearnedTool(t["name"], t.get("description") or "") for t in tools]
        for id, tools in raw.items()
    }


def load_queries(path: Path) -> list[Query]:
    """JSONL: ``{"query": str, "accept": [id, ...], "kind": str?}`` per line."""
    default_kind = path.stem.removeprefix("discovery-")
    out: list[Query] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            kind = str(item.get("kind") or default_kind)
            out.append(Query(item["query"], frozenset(item["accept"]), kind))
    return out


def bm25_ranker(
    entries: Sequence[McpCatalogueEntry], tools: dict[str, list[LearnedTool]]
) -> Ranker | None:
    """Plain BM25 (bm25s) on Snowball stems over one text per entry; None without bm25s."""
    try:
        import bm25s
    except ImportError:
        return None
    texts = [
        " ".join(
            [e.name, e.id, e.description, *e.tags, *e.keywords]
            + [t.name for t in tools.get(e.id, [])]
        )
        for e in entries
    ]
    retriever = bm25s.BM25()
    retriever.index([tokenize(t, split_camel=True) or ["\0"] for t in texts], show_progress=False)
    size = len(entries)

    def rank(query: str) -> list[str]:
        words = tokenize(query)
        if not words:
            return []
        scores = retriever.get_scores(words)
        order = sorted(range(size), key=lambda i: (-scores[i], i))[:10]
        return [entries[i].id for i in order if scores[i] > 0]

    return rank


def index_ranker(index: CatalogueIndex[McpCatalogueEntry]) -> Ranker:
    """A kept ``CatalogueIndex`` (as a mount keeps one)."""

    def rank(query: str) -> list[str]:
        return [e.id for e in index.search(query, limit=10)]

    return rank


@dataclass
class Tally:
    """Hits at 1, 3 and 10 over ``n`` queries, and each query's milliseconds."""

    n: int = 0
    at1: int = 0
    at3: int = 0
    at10: int = 0

    def add(self, ids: Sequence[str], accept: frozenset[str]) -> None:
        self.n += 1
        self.at1 += bool(ids[:1]) and ids[0] in accept
        self.at3 += bool(accept & set(ids[:3]))
        self.at10 += bool(accept & set(ids[:10]))

    def rates(self) -> tuple[float, float, float]:
        return (self.at1 / self.n, self.at3 / self.n, self.at10 / self.n) if self.n else (0, 0, 0)


def measure(
    ranker: Ranker, queries: Sequence[Query], misses: list[str] | None
) -> tuple[dict[str, Tally], list[float]]:
    """Tallies by kind (and ``"all"``), and per-query milliseconds."""
    tallies: dict[str, Tally] = {"all": Tally()}
    times: list[float] = []
    for q in queries:
        started = time.perf_counter()
        ids = ranker(q.text)
        times.append((time.perf_counter() - started) * 1000.0)
        tallies["all"].add(ids, q.accept)
        tallies.setdefault(q.kind, Tally()).add(ids, q.accept)
        if misses is not None and not (ids[:1] and ids[0] in q.accept):
            misses.append(f"  [{q.kind}] {q.text!r}: got {ids[:3]}, want {sorted(q.accept)}")
    return tallies, times


def synthetic_catalogue(
    real: Sequence[McpCatalogueEntry], size: int, seed: int = 7
) -> list[McpCatalogueEntry]:
    """``size`` entries whose words follow ``real``'s descriptions, with invented brands."""
    rng = random.Random(seed)
    vocabulary = [w for e in real for w in re.findall(r"[A-Za-z]+", e.description)]
    tags = sorted({t for e in real for t in e.tags}) or ["misc"]
    syllables = ["ka", "lo", "mi", "ra", "to", "zen", "vex", "pli", "dor", "qua", "sy", "nu"]
    out: list[McpCatalogueEntry] = []
    for i in range(size):
        brand = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))).capitalize()
        words = rng.choices(vocabulary, k=rng.randint(8, 22))
        out.append(
            McpCatalogueEntry(
                id=f"s{i}-{brand.lower()}",
                name=brand,
                description=" ".join(words).capitalize() + f" in {brand}.",
                url=f"https://mcp.example.com/s{i}/mcp",
                tags=rng.sample(tags, k=min(len(tags), rng.randint(1, 4))),
            )
        )
    return out


def documented_call_latency(
    real: Sequence[McpCatalogueEntry], queries: Sequence[str], size: int
) -> dict[str, float]:
    """``match_entries(list, query)`` per query over a synthetic ``size``-entry catalogue: the
    first call (which builds the cached index) and the median of the others, wall and CPU."""
    entries = synthetic_catalogue(real, size)
    started = time.perf_counter()
    match_entries(entries, "warm up")
    first = (time.perf_counter() - started) * 1000.0
    wall: list[float] = []
    cpu: list[float] = []
    for query in queries:
        w0, c0 = time.perf_counter(), time.process_time()
        match_entries(entries, query, limit=10)
        cpu.append((time.process_time() - c0) * 1000.0)
        wall.append((time.perf_counter() - w0) * 1000.0)
    return {
        "first_ms": first,
        "median": statistics.median(wall),
        "cpu_median": statistics.median(cpu),
    }


def _row(name: str, kind: str, tally: Tally, ms: float | None) -> str:
    r1, r3, r10 = tally.rates()
    timing = f"{ms:>10.2f}" if ms is not None else f"{'':>10}"
    return (
        f"{name:<10}{kind:<14}{tally.n:>5}{r1:>8.3f}{r3:>8.3f}{r10:>8.3f}{timing}".rstrip() + "\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the recall table by kind, the latencies and one summary line.

    Returns:
        0 when every measured ranker with a target (default, semantic) meets it, else 1.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--catalogue", type=Path, help="catalogue JSON (default: bench/data)")
    parser.add_argument("--queries", type=Path, help="a JSONL query set (aggregates only)")
    parser.add_argument("--tools", type=Path, help="known tools per id (JSON)")
    parser.add_argument("--misses", action="store_true", help="list missed development queries")
    parser.add_argument("--no-semantic", action="store_true", help="skip the embedding ranker")
    parser.add_argument("--size", type=int, default=10_000, help="synthetic catalogue size")
    parser.add_argument("--limit-queries", type=int, default=0, help="use only the first N")
    args = parser.parse_args(argv)
    if args.queries is not None and args.misses:
        parser.error("--misses lists queries, which a --queries file must never show")
    if args.size < 1:
        parser.error(f"--size must be at least 1, got {args.size}")

    entries = load_catalogue(args.catalogue or DATA / "catalogue.json")
    tools = load_tools(args.tools)
    if args.queries is not None:
        queries = load_queries(args.queries)
    else:
        queries = [q for path in sorted(DATA.glob("discovery-*.jsonl")) for q in load_queries(path)]
    if args.limit_queries:
        queries = queries[: args.limit_queries]
    unknown = {id for q in queries for id in q.accept} - {e.id for e in entries}
    if unknown:
        parser.error(f"the queries accept ids the catalogue lacks: {sorted(unknown)[:5]}")

    rankers: dict[str, Ranker] = {}
    notes: list[str] = []
    baseline = bm25_ranker(entries, tools)
    if baseline is None:
        notes.append("bm25: skipped (bm25s is not installed: pip install bm25s)")
    else:
        rankers["bm25"] = baseline
    rankers["lexical"] = index_ranker(CatalogueIndex(entries, tool_names=tools, ranker=None))
    default = CatalogueIndex(entries, tool_names=tools)
    default.search("warm up the model and the catalogue embeddings")
    rankers["default"] = index_ranker(default)
    missing = None if args.no_semantic else semantic_available()
    if args.no_semantic:
        notes.append("semantic: skipped (--no-semantic)")
    elif missing is not None:
        notes.append(f"semantic: skipped ({missing})")
    else:
        semantic = CatalogueIndex(entries, tool_names=tools, ranker=SemanticRanker())
        semantic.search("warm up the model and the catalogue embeddings")
        rankers["semantic"] = index_ranker(semantic)

    out = sys.stdout
    out.write(
        f"catalogue: {len(entries)} entries, tools known for {len(tools)}; {len(queries)} queries\n"
    )
    out.write(f"{'ranker':<10}{'kind':<14}{'n':>5}{'r@1':>8}{'r@3':>8}{'r@10':>8}{'med ms':>10}\n")
    results: dict[str, tuple[float, float, float, float]] = {}
    for name, ranker in rankers.items():
        misses: list[str] | None = [] if args.misses else None
        tallies, times = measure(ranker, queries, misses)
        median = statistics.median(times) if times else 0.0
        for kind in ["all", *sorted(k for k in tallies if k != "all")]:
            out.write(_row(name, kind, tallies[kind], median if kind == "all" else None))
        results[name] = (*tallies["all"].rates(), median)
        if misses:
            out.write("\n".join(misses) + "\n")
    for note in notes:
        out.write(note + "\n")

    lat = documented_call_latency(entries, [q.text for q in queries][:400], args.size)
    out.write(
        f"match_entries(list of {args.size}, query): first call {lat['first_ms']:.0f} ms "
        f"(builds the cached index), then wall median {lat['median']:.2f} ms, "
        f"cpu median {lat['cpu_median']:.2f} ms\n"
    )

    ok = True
    parts: list[str] = []
    for name, (r1, r3, r10, median) in results.items():
        line = f"{name} r@1 {r1:.3f} r@3 {r3:.3f} r@10 {r10:.3f} {median:.2f} ms"
        if name in TARGETS:
            t1, t3, tms = TARGETS[name]
            latency = lat["median"] if name == "default" else median
            met = r1 >= t1 and r3 >= t3 and latency < tms
            ok = ok and met
            line += f" (targets {t1} / {t3} / < {tms:.0f} ms: {'met' if met else 'missed'})"
        parts.append(line)
    base = results.get("bm25")
    if base is not None and base[0]:
        ratio = results["default"][0] / base[0]
        parts.append(f"default / bm25 r@1 ratio {ratio:.2f}")
    parts.append(f"documented call at {args.size}: median {lat['median']:.2f} ms")
    out.write(f"SUMMARY {'PASS' if ok else 'FAIL'}: " + "; ".join(parts) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
