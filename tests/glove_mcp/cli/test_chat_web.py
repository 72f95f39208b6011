"""``glove-mcp chat`` and a server's view (MCP Apps), against FastMCP 4
(``tests/interop/fastmcp``): the terminal prints the result's text and a link; the link opens
this conversation in the chat's own web page, with the view, for the secret in the link
alone; a view's tool call is asked on the page; the secret is in no log line."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from glove_core import SqliteStore
from tests.glove_mcp.cli._chat_web import LINK, Chat, running_chat
from tests.glove_mcp.cli._commands import Ran, in_process, write_catalogue
from tests.interop.fastmcp.server import fastmcp_server


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chat]:
    home = tmp_path_factory.mktemp("chat-web")
    with fastmcp_server() as url, running_chat(home, url) as running:
        yield running


def test_a_view_result_prints_its_text_and_a_link(chat: Chat) -> None:
    result = next(line for line in chat.out if line.startswith("← fm__show_counter: "))
    assert "The counter is at" in result  # the result's text, as ever
    line = next(line for line in chat.out if "view of fm: " in line)
    assert line.strip().startswith("view of fm: http://127.0.0.1:")
    assert line.rstrip().endswith("(opens this chat in the browser)")
    # /web prints the same link (the page is served already).
    chat.send("/web")
    again = chat.read_until(r"this conversation in the browser")
    assert f"#session=s&key={chat.secret}" in again


def test_the_link_opens_this_conversation_with_its_view(chat: Chat) -> None:
    page = httpx2.get(chat.base + "/")
    assert page.status_code == 200 and "/web/app.js" in page.text
    shown = httpx2.get(chat.base + "/sessions/s", headers=chat.headers())
    assert shown.status_code == 200, shown.text
    messages = shown.json()["messages"]
    saved = asyncio.run(_saved(chat.home / "chat.db"))
    assert messages == saved  # the chat's own conversation, as the chat saved it
    assert any(m.get("text") == "show me the counter" for m in messages)
    results = [r for m in messages for r in m.get("tool_results", [])]
    view = results[0]["result"]["render_data"]["mcp_app"]
    assert view["server"] == "fm" and "<button" in view["html"]
    # The frame the page shows the view in: the server's sandboxed loader, unchanged.
    frame = httpx2.get(chat.base + "/web/app-frame")
    assert "sandbox allow-scripts" in frame.headers["content-security-policy"]


async def _saved(db: Path) -> list[dict[str, Any]]:
    async with SqliteStore(db, "s") as store:
        return [m.model_dump(mode="json", exclude_none=True) for m in await store.get_messages()]


def test_a_wrong_or_missing_secret_is_refused(chat: Chat) -> None:
    assert httpx2.get(chat.base + "/sessions/s").status_code == 401
    wrong = "x" * 43
    assert httpx2.get(chat.base + "/sessions/s", headers=chat.headers(wrong)).status_code == 401
    # The secret opens this conversation only: nothing else of the chat's file, no change.
    key = chat.headers()
    assert httpx2.get(chat.base + "/sessions", headers=key).status_code == 404
    assert httpx2.post(chat.base + "/sessions", headers=key, json={}).status_code == 404
    assert httpx2.get(chat.base + "/sessions/other", headers=key).status_code == 404
    assert httpx2.delete(chat.base + "/sessions/s", headers=key).status_code == 404
    sent = httpx2.post(chat.base + "/sessions/s/messages", headers=key, json={"text": "hi"})
    assert sent.status_code == 404
    assert "open the link the chat printed" in sent.json()["error"]


def test_a_views_tool_call_is_asked_on_the_page(chat: Chat) -> None:
    key = chat.headers()
    call = {"tool": "fm__increment", "arguments": {}, "server": "fm"}
    answers: list[httpx2.Response] = []
    calling = threading.Thread(
        target=lambda: answers.append(
            httpx2.post(chat.base + "/sessions/s/app-calls", headers=key, json=call, timeout=60)
        )
    )
    calling.start()
    # The terminal (stdin a pipe) would refuse it at once: it waits for the page instead.
    asked = None
    while asked is None and calling.is_alive():
        slots = httpx2.get(chat.base + "/sessions/s/slots", headers=key).json()["slots"]
        asked = next((s for s in slots if s["input"].get("requested_by")), None)
    assert asked is not None, answers[0].json()  # not refused by the terminal meanwhile
    assert asked["renderer"] == "permission_request"
    assert asked["input"]["requested_by"] == "the view of fm"
    assert answers == []
    answered = httpx2.post(
        f"{chat.base}/sessions/s/slots/{asked['id']}", headers=key, json={"value": True}
    )
    assert answered.status_code == 200, answered.text
    calling.join(60)
    result = answers[0].json()
    assert result["status"] == "success", result
    assert result["render_data"]["structured_content"]["count"] >= 1


def test_the_secret_is_in_no_log_line_and_goes_with_the_chat(chat: Chat) -> None:
    base, secret = chat.base, chat.secret
    assert httpx2.get(base + "/sessions/s", headers=chat.headers()).status_code == 200
    chat.send("/quit")
    assert chat.process.wait(30) == 0
    log = (chat.home / "stderr.log").read_text()
    assert "glove_mcp" in log  # --debug: every log line of the run is there
    assert secret not in log
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(base + "/sessions/s", headers=chat.headers())


def _chat_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], session: str, stdin: str
) -> Ran:
    (tmp_path / "script.json").write_text(json.dumps(["Hi."]), encoding="utf-8")
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    return in_process(
        *("chat", "--session", session, "--new", "--script", str(tmp_path / "script.json")),
        *("--catalogue", str(catalogue), "--db", str(tmp_path / "chat.db")),
        home=tmp_path,
        stdin=stdin,
        capsys=capsys,
    )


def test_web_says_what_it_can_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran = _chat_in_process(tmp_path, capsys, "fresh", "/web\nhello\n/web\n")
    assert ran.status == 0, ran.err
    assert "nothing to show yet: the web page opens once the conversation has a message" in ran.out
    link = LINK.pattern.replace("(s)", "fresh")
    assert re.search(link, ran.out.split("agent: Hi.")[1]), ran.out  # once it has one


def test_web_names_an_id_the_page_cannot_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _chat_in_process(tmp_path, capsys, "two words", "hello\n/web\n")
    assert ran.status == 0, ran.err
    assert (
        "conversation two words cannot be opened in the web page: its id is not 1-128 "
        "characters from A-Z a-z 0-9 _ . : -"
    ) in ran.out
    assert "http://127.0.0.1" not in ran.out
