"""The link ``glove-mcp chat`` prints under a view's result, opened in Chromium, against
FastMCP 4 (``tests/interop/fastmcp``): the page takes the secret from the link's fragment and
drops it from the address, shows the chat's conversation alone with the view, and its
button's tool call is asked on the page (the terminal, on a pipe, would have refused it); a
view's message is left for the person to type in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.glove_mcp.cli._chat_web import running_chat
from tests.interop.fastmcp.server import fastmcp_server, require_fastmcp


def test_the_chats_link_opens_its_conversation_with_the_view(browser: Any, tmp_path: Path) -> None:
    require_fastmcp()
    from playwright.sync_api import expect

    with fastmcp_server() as mcp_url, running_chat(tmp_path, mcp_url) as chat:
        context = browser.new_context(viewport={"width": 1000, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        expect.set_options(timeout=30_000)
        page.goto(f"{chat.base}/#session=s&key={chat.secret}")
        expect(page.locator("#status")).to_contain_text("following s")
        # The secret left the address (and the history entry) at once; the tab keeps it.
        assert page.url == f"{chat.base}/#session=s"
        assert page.evaluate("sessionStorage.getItem('glove-api-key')") == chat.secret
        # The chat's conversation alone: no list of sessions, nothing to delete or send.
        expect(page.locator("#principal")).to_have_text("opened from glove-mcp chat")
        expect(page.locator("main > nav")).to_be_hidden()
        expect(page.locator("#delete-session")).to_be_hidden()
        expect(page.locator("#text")).to_be_disabled()
        expect(page.locator(".bubble.user").first).to_have_text("show me the counter")
        box = page.locator(".view")
        expect(box).to_have_count(1)
        assert box.locator("iframe").get_attribute("sandbox") == "allow-scripts"
        view = page.frame_locator(".view iframe")
        expect(view.locator("#said")).to_have_text("tool said: The counter is at 0.")

        view.locator("#plus").click()
        ask = page.locator('.ask[data-renderer="permission_request"]')
        expect(ask.locator(".requested-by")).to_contain_text("the view of fm")
        ask.get_by_role("button", name="Allow").click()
        expect(view.locator("#count")).to_have_text("count: 1")

        view.locator("#tell").click()
        expect(box.locator(".error")).to_contain_text(
            "type it in the terminal to send it: The counter is done."
        )
        expect(view.locator("#said")).not_to_have_text("message handed over")

        # A reload keeps the conversation (the secret in the tab, the id in the fragment).
        page.reload()
        expect(page.locator("#status")).to_contain_text("following s")
        expect(page.locator(".view")).to_have_count(1)
        context.close()
        # The browser asked for "/" alone: the fragment, and the secret in it, never left it
        # (the chat runs with --debug: its access log lines are there).
        log = (chat.home / "stderr.log").read_text()
        assert "glove_mcp.access: GET / 200" in log
        assert chat.secret not in log
