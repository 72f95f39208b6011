#!/usr/bin/env python3
"""Form self-check for heldout2/queries.jsonl. Plain Python, no project imports.

usage: python3 check.py CATALOGUE_JSON [QUERIES_JSONL]
  QUERIES_JSONL defaults to queries.jsonl next to this file.
Checks: every line parses as a JSON object with exactly query/accept/kind;
kind is valid; accept is a non-empty list of unique ids that exist in the
catalogue; no duplicate queries; query length 3-25 words. Prints counts by kind,
the number of distinct accepted servers, and (informational) queries of kinds
other than vendor/typo that contain a catalogue id as a whole word.
Exit status 0 and a final 'ok' when all hard checks pass.
"""
import json, os, re, sys
from collections import Counter

KINDS = {"vendor", "task", "typo", "non-native", "ambiguous"}

def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check.py CATALOGUE_JSON [QUERIES_JSONL]")
    cat_path = sys.argv[1]
    q_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries.jsonl")
    cat = json.load(open(cat_path, encoding="utf-8"))
    ids = {s["id"] for s in cat}
    errors, rows = [], []
    with open(q_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                errors.append(f"line {n}: empty line"); continue
            try:
                o = json.loads(line)
            except Exception as e:
                errors.append(f"line {n}: bad JSON: {e}"); continue
            if not isinstance(o, dict) or set(o) != {"query", "accept", "kind"}:
                errors.append(f"line {n}: keys must be query/accept/kind"); continue
            q, acc, kind = o["query"], o["accept"], o["kind"]
            if not isinstance(q, str) or not q.strip():
                errors.append(f"line {n}: empty query")
            elif not 3 <= len(q.split()) <= 25:
                errors.append(f"line {n}: {len(q.split())} words (want 3-25)")
            if kind not in KINDS:
                errors.append(f"line {n}: bad kind {kind!r}")
            if not isinstance(acc, list) or not acc:
                errors.append(f"line {n}: accept must be a non-empty list"); continue
            if len(set(acc)) != len(acc):
                errors.append(f"line {n}: duplicate ids in accept")
            for a in acc:
                if a not in ids:
                    errors.append(f"line {n}: unknown id {a!r}")
            rows.append((n, o))
    dup = [q for q, c in Counter(o["query"].lower() for _, o in rows).items() if c > 1]
    for q in dup:
        errors.append(f"duplicate query: {q!r}")
    kinds = Counter(o["kind"] for _, o in rows)
    accepted = Counter(a for _, o in rows for a in o["accept"])
    print(f"queries: {len(rows)}")
    for k in ["vendor", "task", "typo", "non-native", "ambiguous"]:
        print(f"  {k:11s} {kinds.get(k, 0)}")
    print(f"distinct accepted servers: {len(accepted)} of {len(ids)} in catalogue")
    sizes = Counter(len(o["accept"]) for _, o in rows)
    print("accept-list sizes: " + ", ".join(f"{s}:{sizes[s]}" for s in sorted(sizes)))
    # informational: id words inside queries of kinds that should avoid vendor words
    notes = []
    for n, o in rows:
        if o["kind"] in ("vendor", "typo"):
            continue
        low = o["query"].lower()
        for i in ids:
            if re.search(r"(?<![a-z0-9])" + re.escape(i) + r"(?![a-z0-9])", low):
                notes.append(f"  line {n} [{o['kind']}] contains id {i!r}")
    print(f"info: non-vendor/typo queries containing a catalogue id as a whole word: {len(notes)}")
    for x in notes:
        print(x)
    if errors:
        print(f"ERRORS ({len(errors)}):")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("ok")

if __name__ == "__main__":
    main()
