"""The chat page of ``glove-mcp serve --web`` on a phone-sized window (360 px wide): nothing is
cut off, sessions are listed by their first message with a time, a reload keeps the open
session (in the URL's fragment, never the key), and the page has an icon (no 404)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.test_web_chat import KEY, _serve

WIDTH = 360


def _within_viewport(page: Any, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not shown"
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (selector, box)
    height = page.viewport_size["height"]
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, (selector, box)


def _no_sideways_scroll(page: Any) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= WIDTH, f"the page is {wide} px wide in a {WIDTH} px window"


def test_the_page_on_a_phone(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    replies = ["Noted: build 7 goes out tonight.", "Second answer."]
    with _serve(tmp_path, replies) as (url, log):
        context = browser.new_context(viewport={"width": WIDTH, "height": 740})
        page = context.new_page()
        answers: list[tuple[int, str]] = []
        page.on("response", lambda response: answers.append((response.status, response.url)))
        page.set_default_timeout(30_000)
        expect.set_options(timeout=30_000)

        page.goto(url + "/")
        _within_viewport(page, "#key")
        _within_viewport(page, "#key-form button")
        page.fill("#key", KEY)
        page.click("#key-form button")
        expect(page.locator("#app")).to_be_visible()
        # The key controls: the status gives way, the Forget-key button stays whole.
        _within_viewport(page, "#forget")

        page.click("#new-session")
        expect(page.locator("#session-name")).to_contain_text("sess_")
        session_id = page.locator("#session-name").inner_text()
        expect(page.locator("#status")).to_contain_text("following")
        _within_viewport(page, "#text")
        _within_viewport(page, "#send")
        _within_viewport(page, "#delete-session")
        _no_sideways_scroll(page)

        # Untitled until a person says something: the list shows the id, marked as such.
        entry = page.locator(f'#sessions button[data-id="{session_id}"]')
        expect(entry.locator(".title.untitled")).to_have_text(session_id)

        long_message = "Ship build 7 to production tonight " + "and tell the team " * 8
        page.fill("#text", long_message)
        page.click("#send")
        expect(page.locator("#log .bubble.agent").last).to_contain_text("build 7 goes out")
        # Titled by its first message (cut, one line), with the time it last changed.
        title = entry.locator(".title")
        expect(title).to_contain_text("Ship build 7 to production tonight")
        expect(title).not_to_have_class("title untitled")
        expect(entry.locator("time")).not_to_have_text("")
        assert entry.locator("time").get_attribute("datetime")
        expect(page.locator("#session-name")).to_contain_text("Ship build 7")
        _within_viewport(page, "#send")
        _within_viewport(page, "#forget")
        _no_sideways_scroll(page)

        # A second message does not change the title.
        page.fill("#text", "And a second question.")
        page.click("#send")
        expect(page.locator("#log .bubble.agent").last).to_contain_text("Second answer.")
        expect(title).to_contain_text("Ship build 7 to production tonight")

        # A reload keeps the open session: its id is in the fragment, the key is not.
        assert page.url.endswith(f"#session={session_id}"), page.url
        page.reload()
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator(f'#sessions button.open[data-id="{session_id}"]')).to_have_count(1)
        expect(page.locator("#log .bubble.user").first).to_contain_text("Ship build 7")
        expect(page.locator("#log .bubble.agent").last).to_contain_text("Second answer.")
        expect(page.locator("#status")).to_contain_text("following")
        _within_viewport(page, "#send")
        _no_sideways_scroll(page)

        # The icon the browser asks for on its own is there.
        icon = page.request.get(url + "/favicon.ico")
        assert icon.status == 200 and icon.headers["content-type"] == "image/x-icon"
        assert icon.body()[:4] == b"\x00\x00\x01\x00"  # an ICO file
        context.close()

    assert not [a for a in answers if a[0] >= 400], answers
    assert all(KEY not in u for _, u in answers), "the key went into a URL"
    assert KEY not in log.read_text()
