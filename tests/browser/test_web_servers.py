"""The page's Servers panel in a real browser: Connect opens the local authorization server's
page in a new tab, the callback stores the tokens, the panel shows the server connected, and
a session's agent then calls the server's tools with that login; Disconnect forgets it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.browser.test_web_chat import KEY, _process

SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "find_capability", "input": {"need": "list tracker issues"}}]},
    {"tool_calls": [{"name": "activate", "input": {"id": "tracker"}}]},
    "Activated tracker.",
    {"tool_calls": [{"name": "tracker__list_issues", "input": {}}]},
    "One open issue: Fix login.",
]


@contextmanager
def _serve(folder: Path) -> Iterator[str]:
    """``glove-mcp serve --web`` whose catalogue's one server sits behind the local OAuth
    authorization server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(GLOVE_HOME=str(folder), GLOVE_API_KEY=KEY, PYTHONUNBUFFERED="1")
    tracker = [sys.executable, "-m", "glove_mcp.testing", "tracker", "--oauth"]
    with _process(tracker, folder / "tracker.log", env) as tracker_url:
        catalogue = folder / "servers.toml"
        catalogue.write_text(
            f'[[servers]]\nid = "tracker"\nname = "Tracker"\ndescription = "Issues and bugs '
            f'of the team."\ntags = ["issues"]\nurl = "{tracker_url}"\n',
            encoding="utf-8",
        )
        script = folder / "script.json"
        script.write_text(json.dumps(SCRIPT), encoding="utf-8")
        serve = [
            *(sys.executable, "-m", "glove_mcp.cli", "serve", "--port", "0", "--web"),
            *("--script", str(script), "--catalogue", str(catalogue)),
            *("--db", str(folder / "server.db")),
        ]
        with _process(serve, folder / "serve.log", env) as url:
            yield url


def test_connect_a_server_from_the_panel_and_use_it(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with _serve(tmp_path) as url:
        context = browser.new_context(viewport={"width": 1000, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        expect.set_options(timeout=30_000)
        page.goto(url + "/")
        page.fill("#key", KEY)
        page.click("#key-form button")

        row = page.locator('#servers li[data-server="tracker"]')
        expect(row).to_contain_text("not connected")
        with context.expect_page() as opened:
            row.get_by_role("button", name="Connect").click()
        tab = opened.value
        expect(tab.locator("h1")).to_have_text("Connected: Tracker")
        expect(tab.locator("p")).to_have_text("You can close this tab.")
        tab.close()
        # The panel notices by itself.
        expect(row.locator(".server-state")).to_have_text("connected")
        expect(row.get_by_role("button", name="Disconnect")).to_be_visible()

        page.click("#new-session")
        expect(page.locator("#session-name")).to_contain_text("sess_")
        page.fill("#text", "What's open in the tracker?")
        page.press("#text", "Enter")
        log_box = page.locator("#log")
        expect(log_box.locator(".tool.result.success").last).to_contain_text("Fix login")
        expect(log_box.locator(".bubble.agent").last).to_contain_text("One open issue")

        row.get_by_role("button", name="Disconnect").click()
        expect(row.locator(".server-state")).to_have_text("not connected")
        expect(row.get_by_role("button", name="Connect")).to_be_visible()
        assert (tmp_path / "serve.log").read_text().count("Traceback") == 0
