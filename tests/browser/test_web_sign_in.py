"""Signing in to the chat page with a principal's key: the page names the principal and lists
only that principal's sessions; the key stays in the tab's sessionStorage, never in a URL."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2

ALICE = "alice-browser-key-0123456789"
BOB = "bob-browser-key-0123456789ab"


def test_each_principal_signs_in_and_sees_only_its_sessions(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    keys = tmp_path / "keys.toml"
    entries = []
    for name, key in (("alice", ALICE), ("bob", BOB)):
        digest = hashlib.sha256(key.encode()).hexdigest()
        entries.append(f'[[keys]]\nprincipal = "{name}"\nkey_sha256 = "{digest}"\n')
    keys.write_text("".join(entries))
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["ok"] * 5))
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text(
        '[[servers]]\nid = "idle"\nname = "Idle"\ndescription = "Never activated."\n'
        'url = "http://127.0.0.1:9/mcp"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "GLOVE_API"))}
    env.update(GLOVE_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "glove_mcp.cli", "serve", "--port", "0", "--web"),
                *("--keys", str(keys), "--script", str(script), "--catalogue", str(catalogue)),
                *("--db", str(tmp_path / "server.db")),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
        )
    try:
        assert process.stdout is not None
        found = re.search(r"http://[\d.]+:\d+", process.stdout.readline())
        assert found is not None, (tmp_path / "serve.log").read_text()
        url = found.group(0)
        for key, ids in ((ALICE, ["alice-1", "alice-2"]), (BOB, ["bob-1"])):
            for session_id in ids:
                created = httpx2.post(
                    url + "/sessions",
                    json={"id": session_id},
                    headers={"Authorization": f"Bearer {key}"},
                )
                assert created.status_code == 201

        page = browser.new_context().new_page()
        urls: list[str] = []
        page.on("request", lambda request: urls.append(request.url))
        page.set_default_timeout(30_000)
        page.goto(url + "/")
        expect(page.locator("#key-form label")).to_contain_text("API key or token")
        page.fill("#key", ALICE)
        page.click("#key-form button")
        expect(page.locator("#principal")).to_have_text("signed in as alice")
        expect(page.locator("#sessions li")).to_have_count(2)
        expect(page.locator("#sessions")).to_contain_text("alice-1")
        expect(page.locator("#sessions")).not_to_contain_text("bob-1")
        assert page.evaluate("sessionStorage.getItem('glove-api-key')") == ALICE
        # Reloading keeps the tab signed in, as the same principal.
        page.reload()
        expect(page.locator("#principal")).to_have_text("signed in as alice")

        page.click("#forget")
        expect(page.locator("#login")).to_be_visible()
        assert page.evaluate("sessionStorage.getItem('glove-api-key')") is None
        page.fill("#key", BOB)
        page.click("#key-form button")
        expect(page.locator("#principal")).to_have_text("signed in as bob")
        expect(page.locator("#sessions li")).to_have_count(1)
        expect(page.locator("#sessions")).to_contain_text("bob-1")
        # Bob resuming Alice's session by its id finds nothing.
        page.fill("#resume-id", "alice-1")
        page.click("#resume-form button")
        expect(page.locator("#chat-error")).to_contain_text("no session 'alice-1'")
        assert not any(ALICE in u or BOB in u for u in urls)
    finally:
        process.terminate()
        process.wait(30)
        if process.stdout is not None:
            process.stdout.close()
