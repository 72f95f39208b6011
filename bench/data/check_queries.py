#!/usr/bin/env python3
"""Form self-check for a blind query set (realistic2, realistic3). Plain Python, no project
imports.

usage: python3 check_queries.py CATALOGUE_JSON QUERIES_JSONL [--min N]
Checks: at least N queries (--min, default 0); every line parses as a JSON object
with exactly query/accept/kind; kind is valid; accept is a non-empty list of unique
ids that exist in the catalogue; no duplicate queries; query length 3-25 words.
Prints counts and shares by kind, the number of distinct accepted servers, and
(informational) queries of kinds other than vendor/typo that contain a catalogue id
as a whole word.
Exit status 0 and a final 'ok' when all hard checks pass.
"""

import json
import re
import sys
from collections import Counter
from typing import Any

KINDS = ("vendor", "task", "typo", "non-native", "ambiguous")


def _load(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _check_row(n: int, o: Any, ids: set[str], errors: list[str]) -> bool:
    if not isinstance(o, dict) or set(o) != {"query", "accept", "kind"}:
        errors.append(f"line {n}: keys must be query/accept/kind")
        return False
    q, acc, kind = o["query"], o["accept"], o["kind"]
    if not isinstance(q, str) or not q.strip():
        errors.append(f"line {n}: empty query")
    elif not 3 <= len(q.split()) <= 25:
        errors.append(f"line {n}: {len(q.split())} words (want 3-25)")
    if kind not in KINDS:
        errors.append(f"line {n}: bad kind {kind!r}")
    if not isinstance(acc, list) or not acc:
        errors.append(f"line {n}: accept must be a non-empty list")
        return False
    if len(set(acc)) != len(acc):
        errors.append(f"line {n}: duplicate ids in accept")
    errors.extend(f"line {n}: unknown id {a!r}" for a in acc if a not in ids)
    return True


def _rows(path: str, ids: set[str], errors: list[str]) -> list[tuple[int, dict[str, Any]]]:
    rows: list[tuple[int, dict[str, Any]]] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                errors.append(f"line {n}: empty line")
                continue
            try:
                o = json.loads(line)
            except ValueError as e:
                errors.append(f"line {n}: bad JSON: {e}")
                continue
            if _check_row(n, o, ids, errors):
                rows.append((n, o))
    return rows


def main() -> None:
    args = sys.argv[1:]
    minimum = 0
    if "--min" in args:
        at = args.index("--min")
        minimum = int(args[at + 1])
        del args[at : at + 2]
    if len(args) != 2:
        sys.exit("usage: check_queries.py CATALOGUE_JSON QUERIES_JSONL [--min N]")
    q_path = args[1]
    ids = {s["id"] for s in _load(args[0])}
    errors: list[str] = []
    rows = _rows(q_path, ids, errors)
    first: dict[str, int] = {}
    for n, o in rows:
        key = o["query"].lower()
        if key in first:
            errors.append(f"line {n}: the same query as line {first[key]}")
        first.setdefault(key, n)
    kinds = Counter(o["kind"] for _, o in rows)
    accepted = Counter(a for _, o in rows for a in o["accept"])
    print(f"queries: {len(rows)}")
    for k in KINDS:
        share = 100.0 * kinds.get(k, 0) / max(len(rows), 1)
        print(f"  {k:11s} {kinds.get(k, 0):4d}  {share:4.1f}%")
    if len(rows) < minimum:
        errors.append(f"only {len(rows)} queries (want at least {minimum})")
    print(f"distinct accepted servers: {len(accepted)} of {len(ids)} in catalogue")
    sizes = Counter(len(o["accept"]) for _, o in rows)
    print("accept-list sizes: " + ", ".join(f"{s}:{sizes[s]}" for s in sorted(sizes)))
    # Informational: catalogue ids inside queries of kinds that should avoid vendor words.
    notes = [
        f"  line {n} [{o['kind']}] contains id {i!r}"
        for n, o in rows
        if o["kind"] not in ("vendor", "typo")
        for i in ids
        if re.search(r"(?<![a-z0-9])" + re.escape(i) + r"(?![a-z0-9])", o["query"].lower())
    ]
    print(f"info: non-vendor/typo queries containing a catalogue id as a whole word: {len(notes)}")
    for note in notes:
        print(note)
    if errors:
        print(f"ERRORS ({len(errors)}):")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
