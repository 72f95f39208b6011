"""Issue 21, item 13 over HTTP: the chat page is off by default; when on, its files carry a
strict Content-Security-Policy, and the page never writes untrusted text as HTML."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import KEY, running, simple_factory

FILES = {
    "/": "text/html",
    "/web/app.js": "text/javascript",
    "/web/app.css": "text/css",
    "/favicon.ico": "image/x-icon",
}


async def test_the_page_is_served_only_when_asked_for(tmp_path: Path) -> None:
    off = HeadlessServer(str(tmp_path / "off.db"), KEY, simple_factory())
    async with running(off) as client:
        for path in FILES:
            assert (await client.get(path, headers={"Authorization": ""})).status_code == 404


async def test_the_page_and_its_files_carry_a_strict_policy(tmp_path: Path) -> None:
    on = HeadlessServer(str(tmp_path / "on.db"), KEY, simple_factory(), web=True)
    async with running(on) as client:
        for path, media_type in FILES.items():
            # No key needed to load the page (it holds no data; the API it calls does).
            reply = await client.get(path, headers={"Authorization": ""})
            assert reply.status_code == 200
            assert reply.headers["content-type"].startswith(media_type)
            policy = reply.headers["content-security-policy"]
            assert "default-src 'none'" in policy and "script-src 'self'" in policy
            assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
            assert reply.headers["x-content-type-options"] == "nosniff"
            assert reply.headers["referrer-policy"] == "no-referrer"
        page = (await client.get("/")).text
        # Nothing from elsewhere, no inline script or style.
        assert not re.search(r"(src|href)=\"(https?:)?//", page)
        assert "<script>" not in page and "style=" not in page and "<style" not in page
        # The API stays behind the key.
        assert (await client.get("/sessions", headers={"Authorization": ""})).status_code == 401


def test_the_script_never_writes_html() -> None:
    script = resources.files("glove_mcp.server").joinpath("web/app.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script.replace("never innerHTML", ""), sink
    # The key goes in the Authorization header, never in a URL or the console.
    assert '"Bearer " + state.key' in script
    assert "console." not in script
    assert not re.search(r"[?&](key|token|api_key)=", script)
