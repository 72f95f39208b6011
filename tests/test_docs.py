"""The README stays a short page whose links all lead somewhere, and the documentation site's
navigation (``mkdocs.yml``) names only pages that exist (``mkdocs build --strict``, run by CI,
checks the rest: links between pages, anchors, docstrings)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250


def test_the_readme_links_lead_to_files_that_exist() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert "docs/getting-started.md" in local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_the_readme_installs_our_distribution() -> None:
    for command in re.findall(r"pip install [^\n`]*", README):
        if "-e" in command.split():
            continue  # a clone's own checkout
        assert "glove-agents" in command, command
    assert re.search(r"pip install 'glove-agents\[postgres\]'", README)


def test_every_page_in_the_navigation_exists() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:") :]
    pages = re.findall(r":\s+([\w/.-]+\.md)\s*$", nav, flags=re.M)
    assert "index.md" in pages and "api/glove_core.md" in pages
    missing = [p for p in pages if not (ROOT / "docs" / p).exists()]
    assert not missing, missing
    for page in pages:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert text.startswith("# "), f"{page} does not start with its title"
