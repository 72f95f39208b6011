"""Issue 21, item 13: the chat page of ``glove-mcp serve --web`` in a real browser.

One walk through the page, as a person uses it: enter the key, start a session, send a
message, watch the discovery subagent find a server, allow its tool, answer the server's
elicitation, read the streamed reply with the tool call and result, see an outside event
posted through the API wake the agent, reload and resume. It makes the screenshot the README
shows: ``GLOVE_SAVE_SCREENSHOT=1`` writes it to ``docs/web-chat.png`` (otherwise it goes to
the test's temporary folder, so a test run leaves the checkout as it was).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "web-chat.png"
KEY = "browser-test-key-7f3a"

SCRIPT: list[Any] = [
    {
        "text": "Let me find a tool for that.",
        "tool_calls": [{"name": "find_capability", "input": {"need": "deploy builds"}}],
    },
    {"tool_calls": [{"name": "activate", "input": {"id": "ops"}}]},
    "Activated ops: its deploy tool is ready.",
    {"text": "Deploying.", "tool_calls": [{"name": "ops__deploy", "input": {"target": "prod"}}]},
    "Deployed to prod. Markup such as <b>this</b> stays text.",
    "Noted: build 7 passed, nothing else to do.",
]


def _first_line(process: subprocess.Popen[str], log: Path) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=60):
            raise AssertionError(f"no URL within 60 s; log: {log.read_text()}")
    line = process.stdout.readline()
    found = re.search(r"http://[\w.]+:\d+(/mcp)?", line)
    assert found is not None, (line, log.read_text())
    return found.group(0)


@contextmanager
def _process(args: list[str], log: Path, env: dict[str, str]) -> Iterator[str]:
    """Start ``args``; yield the URL from its first stdout line; stop it after."""
    with log.open("w") as errors:
        process = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=env,
            cwd=ROOT,
        )
    try:
        yield _first_line(process, log)
    finally:
        process.terminate()
        process.wait(30)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


@contextmanager
def _serve(folder: Path, replies: list[Any] = SCRIPT) -> Iterator[tuple[str, Path]]:
    """``glove-mcp serve --web --access-log`` with the script and an ``ops`` MCP server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(GLOVE_HOME=str(folder), GLOVE_API_KEY=KEY, PYTHONUNBUFFERED="1")
    ops = [sys.executable, "-m", "tests.browser.ops_server"]
    with _process(ops, folder / "ops.log", env) as ops_url:
        catalogue = folder / "servers.toml"
        catalogue.write_text(
            f'[[servers]]\nid = "ops"\nname = "Ops"\ndescription = "Deploy builds to '
            f'environments."\ntags = ["deploy", "builds"]\nurl = "{ops_url}"\n'
            # ctx.elicit sends a request to the client: the handshake protocol has the
            # back-channel for that.
            'protocol = "legacy"\n',
            encoding="utf-8",
        )
        script = folder / "script.json"
        script.write_text(json.dumps(replies), encoding="utf-8")
        log = folder / "serve.log"
        serve = [
            *(sys.executable, "-m", "glove_mcp.cli", "serve", "--port", "0", "--web"),
            *("--access-log", "--script", str(script), "--catalogue", str(catalogue)),
            *("--db", str(folder / "server.db")),
        ]
        with _process(serve, log, env) as line:
            yield line, log


def test_a_person_talks_to_a_headless_agent_in_the_browser(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with _serve(tmp_path) as (url, log):
        context = browser.new_context(viewport={"width": 1000, "height": 900})
        page = context.new_page()
        urls: list[str] = []
        page.on("request", lambda request: urls.append(request.url))
        page.set_default_timeout(30_000)
        expect.set_options(timeout=30_000)

        first = page.goto(url + "/")
        assert first is not None and first.status == 200
        policy = first.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy

        # A wrong key is refused and asked for again; the right one opens the app.
        page.fill("#key", "not-the-key")
        page.click("#key-form button")
        expect(page.locator("#login-error")).to_contain_text("refused the key")
        page.fill("#key", KEY)
        page.click("#key-form button")
        expect(page.locator("#app")).to_be_visible()

        page.click("#new-session")
        expect(page.locator("#session-name")).to_contain_text("sess_")
        session_id = page.locator("#session-name").inner_text()
        expect(page.locator("#status")).to_contain_text("following")

        page.fill("#text", "Deploy the build to prod, please.")
        page.press("#text", "Enter")
        log_box = page.locator("#log")
        expect(log_box.locator(".bubble.user")).to_contain_text("Deploy the build to prod")
        # The discovery subagent's text is shown as its own.
        subagent = log_box.locator(".bubble.subagent")
        expect(subagent).to_contain_text("Activated ops")
        expect(subagent.locator(".who")).to_contain_text("find_capability")

        # The agent asks before running a tool that changes things.
        ask = page.locator('.ask[data-renderer="permission_request"]')
        expect(ask).to_contain_text("Allow ops__deploy?")
        expect(ask).to_contain_text('"target": "prod"')
        ask.get_by_role("button", name="Allow").click()

        # The MCP server asks the person for a reason (an elicitation).
        form = page.locator('.ask[data-renderer="mcp_elicitation"]')
        expect(form).to_contain_text("Why deploy to prod?")
        form.locator('input[name="reason"]').fill("release 7")
        form.get_by_role("button", name="Accept").click()

        expect(log_box.locator(".tool.call").last).to_contain_text("ops__deploy")
        result = log_box.locator(".tool.result.success").last
        expect(result).to_contain_text("deployed to prod: release 7")
        reply = log_box.locator(".bubble.agent").last
        expect(reply).to_contain_text("Markup such as <b>this</b> stays text.")
        assert log_box.locator("b").count() == 0  # model text is text, never markup
        expect(page.locator(".ask")).to_have_count(0)

        # An outside event posted through the API wakes the agent; the page follows.
        event = {
            "id": "build-7",
            "source": "ci",
            "kind": "build.finished",
            "content": "build 7 passed",
            "when_idle": "wake",
        }
        posted = httpx2.post(
            f"{url}/sessions/{session_id}/events",
            json=event,
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=30,
        )
        assert posted.json() == {"disposition": "woke"}, posted.text
        outside = log_box.locator(".bubble.event")
        expect(outside.locator(".meta")).to_contain_text("ci · build.finished")
        expect(outside.locator(".body")).to_have_text("build 7 passed")
        expect(log_box.locator(".bubble.agent").last).to_contain_text("Noted: build 7 passed")

        shot = SCREENSHOT if os.environ.get("GLOVE_SAVE_SCREENSHOT") == "1" else tmp_path / "a.png"
        page.screenshot(path=str(shot))
        png = shot.read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 300_000

        # The key stays in the tab: a reload resumes without asking, in the session that was
        # open; the session replays.
        page.reload()
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator(f'#sessions button.open[data-id="{session_id}"]')).to_have_count(1)
        expect(log_box.locator(".bubble.agent").last).to_contain_text("Noted: build 7 passed")
        expect(log_box.locator(".tool.result.success").last).to_contain_text(
            "deployed to prod: release 7"
        )

        # Deleting asks first, then the session is gone from the list and the server.
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#delete-session")
        expect(page.locator(f'#sessions button[data-id="{session_id}"]')).to_have_count(0)
        gone = httpx2.get(
            f"{url}/sessions/{session_id}", headers={"Authorization": f"Bearer {KEY}"}, timeout=30
        )
        assert gone.status_code == 404
        context.close()

    assert all(KEY not in u for u in urls), "the key went into a URL"
    text = log.read_text()
    assert KEY not in text
    assert "GET / 200" in text and f"POST /sessions/{session_id}/slots/" in text
