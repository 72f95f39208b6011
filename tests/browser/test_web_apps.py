"""MCP Apps on the chat page, in Chromium, against FastMCP 4 (``tests/interop/fastmcp``).

A person opens a FastMCP app's view in the page, clicks its button, which calls a tool through
the page; the person allows it on the permission card; the view shows the tool's answer. A
hostile view reads neither the page's DOM nor its storage (where the key is), reaches no
network, cannot navigate the top window, calls no tool of another kind, and its tool call
waits for the permission, and is refused when denied.
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

from tests.interop.fastmcp.server import fastmcp_server, require_fastmcp

ROOT = Path(__file__).resolve().parents[2]
KEY = "browser-apps-key-41c9"


def script(tool: str) -> list[Any]:
    return [
        {"tool_calls": [{"name": "find_capability", "input": {"need": "a counter to click"}}]},
        {"tool_calls": [{"name": "activate", "input": {"id": "fm"}}]},
        "Activated fm.",
        {"tool_calls": [{"name": f"fm__{tool}", "input": {}}]},
        "Here it is.",
    ]


@contextmanager
def serve(folder: Path, mcp_url: str, replies: list[Any]) -> Iterator[str]:
    """``glove-mcp serve --web`` with ``replies`` as the model and the FastMCP server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(GLOVE_HOME=str(folder), GLOVE_API_KEY=KEY, PYTHONUNBUFFERED="1")
    catalogue = folder / "servers.toml"
    catalogue.write_text(
        f'[[servers]]\nid = "fm"\nname = "Counter"\ndescription = "A counter to click."\n'
        f'url = "{mcp_url}"\n',
        encoding="utf-8",
    )
    (folder / "script.json").write_text(json.dumps(replies), encoding="utf-8")
    args = [
        *(sys.executable, "-m", "glove_mcp.cli", "serve", "--port", "0", "--web"),
        *("--script", str(folder / "script.json"), "--catalogue", str(catalogue)),
        *("--db", str(folder / "server.db")),
    ]
    log = folder / "serve.log"
    with log.open("w") as errors:
        process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=errors, text=True, env=env, cwd=ROOT
        )
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=60), log.read_text()
        found = re.search(r"http://[\w.]+:\d+", process.stdout.readline())
        assert found is not None, log.read_text()
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(30)
        if process.stdout is not None:
            process.stdout.close()


def open_view(browser: Any, url: str, expect: Any) -> tuple[Any, Any, Any]:
    """Sign in, start a session, ask, allow the tool: the page, the view's frame, its box."""
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    expect.set_options(timeout=30_000)
    page.goto(url + "/")
    page.fill("#key", KEY)
    page.click("#key-form button")
    page.click("#new-session")
    expect(page.locator("#status")).to_contain_text("following")
    page.fill("#text", "Show me the view.")
    page.press("#text", "Enter")
    ask = page.locator('.ask[data-renderer="permission_request"]')
    expect(ask).to_contain_text("Allow fm__")
    ask.get_by_role("button", name="Allow").click()
    box = page.locator(".view")
    expect(box).to_have_count(1)
    return page, page.frame_locator(".view iframe"), box


def test_a_person_clicks_a_button_in_a_fastmcp_view(browser: Any, tmp_path: Path) -> None:
    require_fastmcp()
    from playwright.sync_api import expect

    with fastmcp_server() as mcp_url, serve(tmp_path, mcp_url, script("show_counter")) as url:
        page, view, box = open_view(browser, url, expect)
        frame = box.locator("iframe")
        assert frame.get_attribute("sandbox") == "allow-scripts"
        # Initialized over postMessage, then given the tool's input and result.
        expect(view.locator("#count")).to_have_text("host: glove-web")
        expect(view.locator("#said")).to_have_text("tool said: The counter is at 0.")
        # The view's size-changed notification sized the frame.
        expect(frame).to_have_css("height", "180px")

        view.locator("#plus").click()
        ask = page.locator('.ask[data-renderer="permission_request"]')
        expect(ask).to_contain_text("Allow fm__increment?")
        expect(ask.locator(".requested-by")).to_contain_text("the view of fm")
        ask.get_by_role("button", name="Allow").click()
        expect(view.locator("#count")).to_have_text("count: 1")

        # A view's message to the agent waits in the composer for the person to send it.
        view.locator("#tell").click()
        expect(view.locator("#said")).to_have_text("message handed over")
        expect(page.locator("#text")).to_have_value("The counter is done.")

        # The frame's own policy: the extension's default, nothing of this origin.
        response = page.request.get(url + "/web/app-frame")
        policy = response.headers["content-security-policy"]
        assert "sandbox allow-scripts" in policy
        assert "connect-src 'none'" in policy and "'self'" not in policy.split("frame-ancestors")[0]
        page.context.close()


def test_a_hostile_view_reaches_nothing_and_calls_only_with_permission(
    browser: Any, tmp_path: Path
) -> None:
    require_fastmcp()
    from playwright.sync_api import expect

    with fastmcp_server() as mcp_url, serve(tmp_path, mcp_url, script("show_hostile")) as url:
        page, view, _box = open_view(browser, url, expect)
        report = view.locator("#report")
        blocked = ("dom", "storage", "local", "cookie", "navigate")
        for line in (f"{what}: blocked" for what in blocked):
            expect(report).to_contain_text(line)
        expect(report).to_contain_text("fetch: blocked")
        expect(report).to_contain_text("other tool: refused")
        # Its call waits for the person; denied, it is refused and the tool never ran.
        ask = page.locator('.ask[data-renderer="permission_request"]')
        expect(ask).to_contain_text("Allow fm__increment?")
        expect(report).not_to_contain_text("call:")
        ask.get_by_role("button", name="Deny").click()
        expect(report).to_contain_text("call: refused")
        # The top window stayed where it was, and the key where the page keeps it.
        assert page.url.startswith(url)
        assert page.evaluate("sessionStorage.getItem('glove-api-key')") == KEY
        page.context.close()
