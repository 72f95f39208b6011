"""One headless Chromium (Debian's package) per test module, driven by Playwright.

Install it with ``bash tests/browser/install.sh``. Without it the browser tests skip, saying
so; with ``GLOVE_REQUIRE_BROWSER=1`` (CI) they fail instead. Playwright drives the system
browser (``executable_path``): ``playwright install`` is never needed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")

# Chromium as root in a container: no sandbox, no GPU, and none of its background
# connections (update checks, sync, QUIC probes), which the machine refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("GLOVE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"GLOVE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A launched Chromium (``playwright.sync_api.Browser``), shared by a module's tests.

    Module scope, not session: Playwright's sync API keeps an event loop running in this
    thread while it is open, which would stop the asyncio tests that run after it in the same
    process. pytest closes it before a test of another module runs.
    """
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing: run `bash tests/browser/install.sh`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing: pip install -e '.[test]'")
    with sync_playwright() as driver:
        # Playwright gives the browser a new, empty profile of its own (--user-data-dir).
        launched = driver.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()
