#!/usr/bin/env python3
"""Form check for the blind discovery sets (standard library only).

Usage: python3 check.py [REALISTIC_CATALOGUE_JSON]

Checks, for registry/queries.jsonl against registry/catalogue.jsonl and for
tools/queries.jsonl against the realistic catalogue (default
/work/main/bench/data/realistic/catalogue.json):
  * every line is a JSON object with "query" (non-empty str), "accept" (non-empty list
    of str, no repeats) and "kind" (one of the allowed kinds);
  * every accepted id exists in the catalogue;
  * no query text appears twice (case- and whitespace-insensitive);
  * the registry catalogue has unique ids, sorted order, non-empty descriptions.
Prints counts by kind and "ok", or the problems and exits 1.
"""
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"task", "vendor", "vague", "typo", "domain"}


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_queries(name, queries, ids, problems):
    seen = set()
    kinds = collections.Counter()
    sizes = []
    for i, q in enumerate(queries, 1):
        where = f"{name}:{i}"
        if not isinstance(q, dict) or set(q) != {"query", "accept", "kind"}:
            problems.append(f"{where}: keys must be query, accept, kind")
            continue
        text, acc, kind = q["query"], q["accept"], q["kind"]
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: empty query")
        key = " ".join(str(text).lower().split())
        if key in seen:
            problems.append(f"{where}: duplicate query {text!r}")
        seen.add(key)
        if kind not in KINDS:
            problems.append(f"{where}: unknown kind {kind!r}")
        kinds[kind] += 1
        if not isinstance(acc, list) or not acc:
            problems.append(f"{where}: accept must be a non-empty list")
            continue
        if len(set(acc)) != len(acc):
            problems.append(f"{where}: repeated id in accept")
        for a in acc:
            if a not in ids:
                problems.append(f"{where}: unknown id {a!r}")
        sizes.append(len(acc))
    print(f"{name}: {len(queries)} queries; kinds {dict(sorted(kinds.items()))}; "
          f"accept size min {min(sizes) if sizes else 0} max {max(sizes) if sizes else 0}")


def main(argv):
    problems = []
    realistic = argv[1] if len(argv) > 1 else "/work/main/bench/data/realistic/catalogue.json"

    cat = load_jsonl(os.path.join(HERE, "registry", "catalogue.jsonl"))
    cat_ids = [e.get("id") for e in cat]
    if len(set(cat_ids)) != len(cat_ids):
        problems.append("registry catalogue: duplicate ids")
    if cat_ids != sorted(cat_ids):
        problems.append("registry catalogue: not sorted by id")
    for e in cat:
        if set(e) != {"id", "name", "description", "source"} or not e["description"].strip():
            problems.append(f"registry catalogue: bad entry {e.get('id')!r}")
        elif not (e["id"].startswith("pypi:") or e["id"].startswith("npm:")):
            problems.append(f"registry catalogue: bad id prefix {e['id']!r}")
    print(f"registry catalogue: {len(cat)} entries")
    if len(cat) < 10000:
        problems.append("registry catalogue: fewer than 10,000 entries")
    check_queries("registry/queries.jsonl",
                  load_jsonl(os.path.join(HERE, "registry", "queries.jsonl")), set(cat_ids), problems)

    with open(realistic, encoding="utf-8") as f:
        rcat = json.load(f)
    check_queries("tools/queries.jsonl",
                  load_jsonl(os.path.join(HERE, "tools", "queries.jsonl")),
                  {e["id"] for e in rcat}, problems)

    if problems:
        for p in problems[:200]:
            print("PROBLEM:", p)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
