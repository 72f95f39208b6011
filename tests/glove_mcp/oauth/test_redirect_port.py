"""Issue 16, item 12: ``run_mcp_oauth(redirect_url=...)`` ignored the redirect's port and bound
``port=`` (53683 by default), so the browser was sent to a port nobody listened on. Now the
listener binds the redirect's port and path; a ``port=`` that disagrees is refused before any
request; a redirect on another host is completed by pasting the redirected URL."""

from __future__ import annotations

import asyncio
import os
import socket
import webbrowser
from collections.abc import AsyncIterator, Iterator
from typing import IO
from urllib.parse import parse_qs, urlparse

import pytest

from glove_mcp.oauth import MemoryOAuthStore, run_mcp_oauth
from glove_mcp.testing.oauth_server import OAuthTestServer, serve_oauth_server
from tests.glove_mcp.oauth._browser import Browser


@pytest.fixture
async def auth_server() -> AsyncIterator[OAuthTestServer]:
    async with serve_oauth_server() as server:
        yield server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_the_listener_binds_the_redirect_urls_port_and_path(
    auth_server: OAuthTestServer,
) -> None:
    port = _free_port()
    redirect = f"http://127.0.0.1:{port}/oauth/done"
    user = Browser(auth_server.issuer)
    seen: list[str] = []

    def approve(url: str) -> None:
        seen.append(parse_qs(urlparse(url).query)["redirect_uri"][0])
        user.on_authorize_url(url)

    result = await run_mcp_oauth(
        auth_server.url,
        MemoryOAuthStore(),
        "notes",
        redirect_url=redirect,
        on_authorize_url=approve,
        open_browser=False,
        timeout=10,
    )
    await user.finish()
    assert result.status == "AUTHORIZED"
    assert seen == [redirect] and result.redirect_url == redirect
    assert user.landed[0].startswith(redirect + "?")
    assert user.pages[0].status_code == 200  # the listener answered on the redirect's port


@pytest.mark.parametrize(
    ("redirect", "port", "words"),
    [
        ("http://127.0.0.1:9999/callback", 8888, "names port 9999 but port=8888"),
        ("https://127.0.0.1:9999/callback", None, "speaks plain HTTP"),
        ("ftp://127.0.0.1:9999/callback", None, "http(s) URL"),
        ("http://127.0.0.1:0/callback", None, "names port 0"),
        ("http://127.0.0.1:99999/callback", None, "invalid port"),
    ],
)
async def test_an_unusable_redirect_is_refused_before_any_request(
    auth_server: OAuthTestServer, redirect: str, port: int | None, words: str
) -> None:
    store = MemoryOAuthStore()
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        await run_mcp_oauth(
            auth_server.url, store, "notes", redirect_url=redirect, port=port, timeout=5
        )
    assert await store.get("notes") is None
    assert auth_server.provider.counters.registrations == 0


@pytest.fixture
def stdin_pipe(monkeypatch: pytest.MonkeyPatch) -> Iterator[IO[str]]:
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "r")
    writer = os.fdopen(write_fd, "w")
    monkeypatch.setattr("sys.stdin", reader)
    yield writer
    writer.close()
    reader.close()


async def test_a_redirect_on_another_host_is_pasted_even_after_the_browser_opened(
    auth_server: OAuthTestServer, stdin_pipe: IO[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hosted page shows the code: the browser lands there, never on this machine.
    redirect = "https://login.example.invalid/oauth/done"
    user = Browser(auth_server.issuer, deliver=False)
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[None]] = []

    async def visit_then_paste(url: str) -> None:
        await user.visit(url)
        stdin_pipe.write(user.landed[0] + "\n")
        stdin_pipe.flush()

    def fake_open(url: str) -> bool:  # the system browser, in a worker thread
        loop.call_soon_threadsafe(lambda: tasks.append(loop.create_task(visit_then_paste(url))))
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    monkeypatch.setenv("DISPLAY", ":0")
    result = await run_mcp_oauth(
        auth_server.url, MemoryOAuthStore(), "notes", redirect_url=redirect, timeout=10
    )
    await asyncio.gather(*tasks)
    assert result.status == "AUTHORIZED" and result.redirect_url == redirect
    assert user.landed[0].startswith(redirect + "?")
