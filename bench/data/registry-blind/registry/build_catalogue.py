#!/usr/bin/env python3
"""Build registry/catalogue.jsonl: MCP-related packages from PyPI and npm lists.

Usage: python3 build_catalogue.py PYPI_TSV NPM_TSV [OUT_JSONL]

Standard library only. A row is kept when its name or summary mentions "mcp" or
"model context protocol" (case-insensitive) and its summary is neither empty nor a
template placeholder. Output is sorted by id, one JSON object per line:
{"id": "pypi:<name>" | "npm:<name>", "name", "description", "source"}.
"""
import csv
import json
import os
import re
import sys

csv.field_size_limit(sys.maxsize)

MCP_RE = re.compile(r"mcp|model context protocol", re.IGNORECASE)
# "mcp" inside names that are not about the protocol: Microchip part numbers (MCP3008,
# MCP23017, MCP2221 ...), Mitsubishi's "MC protocol", Minecraft Pocket Edition (MCPE / mcpi).
NOT_PROTOCOL_RE = re.compile(r"mcp\d|mcprotocol|mcpe(?![a-z])|mcpi(?![a-z])", re.IGNORECASE)
# "[tested here: ...]" notes at the start of npm summaries come from the list maker, not the authors.
TESTED_RE = re.compile(r"^\s*\[tested here:[^\]]*\]\s*", re.IGNORECASE)

# Exact summaries (lower-cased, stripped of trailing punctuation) left by project templates
# or used for name reservations / empty stubs.
PLACEHOLDERS = {
    "add your description here",
    "a small example package",
    "a mcp server project",
    "an mcp server project",
    "a sample python project",
    "a short description of the project",
    "a short description of your project",
    "short description",
    "project description",
    "package description",
    "my package description",
    "your project description",
    "description",
    "description here",
    "add description here",
    "add a description",
    "todo",
    "tbd",
    "test",
    "testing",
    "placeholder",
    "this package is reserved",
    "squatguard mcp template for python",
    "benign slopsquatting research package",
    "none",
    "null",
    "-",
}
PLACEHOLDER_PATTERNS = [
    re.compile(r"^add your description", re.IGNORECASE),
    re.compile(r"reserved placeholder package", re.IGNORECASE),
    re.compile(r"^(this )?(package )?name reserved\b", re.IGNORECASE),
    re.compile(r"^placeholder\b", re.IGNORECASE),
    re.compile(r"^a minimal python project template", re.IGNORECASE),
]


def mentions_mcp(text: str) -> bool:
    return bool(MCP_RE.search(NOT_PROTOCOL_RE.sub(" ", text)))


def is_placeholder(summary: str) -> bool:
    s = summary.strip()
    if not s:
        return True
    key = s.lower().rstrip(".! ")
    if key in PLACEHOLDERS:
        return True
    return any(p.search(s) for p in PLACEHOLDER_PATTERNS)


def read_rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        lower = [h.lower() for h in header]
        name_i = lower.index("name")
        summ_i = next(i for i, h in enumerate(lower) if h.startswith("summary"))
        for row in reader:
            if len(row) <= max(name_i, summ_i):
                # Short row: summary absent.
                name = row[name_i] if len(row) > name_i else ""
                yield name, ""
                continue
            yield row[name_i], row[summ_i]


def build(pypi_path, npm_path):
    out = {}
    for prefix, path in (("pypi", pypi_path), ("npm", npm_path)):
        source = os.path.basename(path)
        for name, summary in read_rows(path):
            name = name.strip()
            if not name:
                continue
            desc = TESTED_RE.sub("", summary).strip()
            desc = " ".join(desc.split())
            if not (mentions_mcp(name) or mentions_mcp(desc)):
                continue
            if is_placeholder(desc):
                continue
            pid = f"{prefix}:{name}"
            out[pid] = {"id": pid, "name": name, "description": desc, "source": source}
    return [out[k] for k in sorted(out)]


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = argv[3] if len(argv) > 3 else os.path.join(here, "catalogue.jsonl")
    entries = build(argv[1], argv[2])
    with open(out_path, "w", encoding="utf-8") as f:
        for e in entries:
            f.write(json.dumps(e, ensure_ascii=False, sort_keys=False) + "\n")
    print(len(entries))
    return 0 if len(entries) >= 10000 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
