"""Self-check of the held-out discovery data set: form only, no ranking.

Run: python3 check.py   (from this folder, or give the folder as argument)
"""

import json
import os
import sys
from collections import Counter
from typing import Any


def _load(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
errors: list[str] = []

cat = _load(os.path.join(here, "catalogue.json"))
id_list = [e.get("id") for e in cat]
dup = [i for i, n in Counter(id_list).items() if n > 1]
if dup:
    errors.append(f"duplicate ids: {dup}")
ids = set(id_list)
for e in cat:
    for field in ("id", "name", "description", "url", "tags", "source"):
        if field not in e:
            errors.append(f"{e.get('id')}: missing field {field}")
    if not str(e.get("description", "")).strip():
        errors.append(f"{e.get('id')}: empty description")
    if not str(e.get("name", "")).strip():
        errors.append(f"{e.get('id')}: empty name")
    if e.get("id") != str(e.get("id")).lower() or " " in str(e.get("id")):
        errors.append(f"{e.get('id')}: id not lowercase kebab")
    if not isinstance(e.get("tags"), list) or len(e.get("tags", [])) > 4:
        errors.append(f"{e.get('id')}: tags must be a list of at most 4")
    if not str(e.get("url", "")).startswith("http"):
        errors.append(f"{e.get('id')}: url not absolute")
    if len(e.get("description", "")) > 420:
        errors.append(f"{e.get('id')}: description longer than 420 chars")

tools_path = os.path.join(here, "tools.json")
n_tools = 0
if os.path.exists(tools_path):
    tools = _load(tools_path)
    for sid, lst in tools.items():
        if sid not in ids:
            errors.append(f"tools.json: unknown server id {sid}")
        names = [t.get("name") for t in lst]
        if len(names) != len(set(names)):
            errors.append(f"tools.json: duplicate tool names in {sid}")
        for t in lst:
            if not t.get("name") or not str(t.get("description", "")).strip():
                errors.append(f"tools.json: {sid}: tool without name or description: {t}")
    n_tools = len(tools)

kinds: Counter[str] = Counter()
seen: set[str] = set()
allowed = {"vendor", "task", "typo", "non-native", "ambiguous"}
with open(os.path.join(here, "queries.jsonl"), encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except ValueError as exc:
            errors.append(f"queries.jsonl:{n}: bad json: {exc}")
            continue
        if q.get("kind") not in allowed:
            errors.append(f"queries.jsonl:{n}: bad kind {q.get('kind')}")
        kinds[q.get("kind")] += 1
        if not q.get("query", "").strip():
            errors.append(f"queries.jsonl:{n}: empty query")
        if q.get("query") in seen:
            errors.append(f"queries.jsonl:{n}: duplicate query")
        seen.add(q.get("query"))
        acc = q.get("accept")
        if not isinstance(acc, list) or not acc:
            errors.append(f"queries.jsonl:{n}: empty accept")
            continue
        for a in acc:
            if a not in ids:
                errors.append(f"queries.jsonl:{n}: accept id not in catalogue: {a}")
        if len(acc) != len(set(acc)):
            errors.append(f"queries.jsonl:{n}: duplicate accept ids")

print(f"servers: {len(ids)}  tools entries: {n_tools}  queries: {sum(kinds.values())}")
print("queries by kind:", dict(sorted(kinds.items())))
if errors:
    print(f"{len(errors)} error(s):")
    for e in errors:
        print("  " + e)
    sys.exit(1)
print("ok")
