"""run_mcp_oauth against the local authorization server, over real HTTP."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import webbrowser
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlparse

import pytest

from glove_mcp.errors import (
    OAuthAuthorizationDeniedError,
    OAuthCallbackTimeoutError,
)
from glove_mcp.oauth import (
    FsOAuthStore,
    MemoryOAuthStore,
    OAuthTokenSource,
    VerifyToolCall,
    run_mcp_oauth,
)
from glove_mcp.testing.oauth_server import OAuthTestServer, serve_oauth_server
from glove_mcp.testing.servers import NOTES_TOOL_NAMES
from tests.glove_mcp.oauth._browser import Browser


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_full_login_with_simulated_browser(
    auth_server: OAuthTestServer, browser: Callable[..., Browser], tmp_path: Path
) -> None:
    store = FsOAuthStore(tmp_path / "oauth.json")
    user = browser()
    progress: list[str] = []
    result = await run_mcp_oauth(
        auth_server.url,
        store,
        "notes",
        port=0,
        on_authorize_url=user.on_authorize_url,
        on_progress=progress.append,
        open_browser=False,
        timeout=10,
    )
    await user.finish()
    assert result.status == "AUTHORIZED"
    assert result.tool_count == len(NOTES_TOOL_NAMES)
    assert sorted(result.verify_result) == sorted(NOTES_TOOL_NAMES)
    assert result.redirect_url is not None and result.redirect_url.endswith("/callback")
    assert user.pages[0].status_code == 200
    assert "close this tab" in user.pages[0].text
    counters = auth_server.provider.counters
    assert (counters.registrations, counters.code_exchanges) == (1, 1)
    state = await store.get("notes")
    assert state is not None and state.tokens is not None and state.client is not None
    assert state.tokens.expires_at is not None
    assert state.token_endpoint == f"{auth_server.issuer}/token"
    assert state.resource == auth_server.url
    assert any("logged in" in message for message in progress)

    # A second run finds working tokens: no browser, no new registration.
    def no_browser(url: str) -> None:
        raise AssertionError("the browser must not be opened again")

    again = await run_mcp_oauth(
        auth_server.url, store, "notes", port=0, on_authorize_url=no_browser, open_browser=False
    )
    assert again.status == "ALREADY_AUTHORIZED"
    assert again.tool_count == len(NOTES_TOOL_NAMES)
    assert counters.registrations == 1


async def test_browser_mode_opens_the_system_browser(
    auth_server: OAuthTestServer,
    browser: Callable[..., Browser],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = browser()
    loop = asyncio.get_running_loop()
    opened: list[str] = []

    def fake_open(url: str) -> bool:  # runs in a worker thread, like the real one
        opened.append(url)
        loop.call_soon_threadsafe(user.on_authorize_url, url)
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    monkeypatch.setenv("DISPLAY", ":0")
    result = await run_mcp_oauth(auth_server.url, MemoryOAuthStore(), "notes", port=0, timeout=10)
    await user.finish()
    assert result.status == "AUTHORIZED"
    assert len(opened) == 1 and "code_challenge_method=S256" in opened[0]
    assert "resource=" in opened[0]


async def test_consent_page_approve(browser: Callable[..., Browser]) -> None:
    async with serve_oauth_server(auto_approve=False) as server:
        user = Browser(server.issuer, consent="approve")
        result = await run_mcp_oauth(
            server.url,
            MemoryOAuthStore(),
            "notes",
            port=0,
            on_authorize_url=user.on_authorize_url,
            open_browser=False,
            timeout=10,
        )
        await user.finish()
    assert result.status == "AUTHORIZED"


async def test_denied_consent_raises_typed_error(browser: Callable[..., Browser]) -> None:
    async with serve_oauth_server(deny=True) as server:
        user = Browser(server.issuer)
        with pytest.raises(OAuthAuthorizationDeniedError, match="access_denied") as caught:
            await run_mcp_oauth(
                server.url,
                MemoryOAuthStore(),
                "notes",
                port=0,
                on_authorize_url=user.on_authorize_url,
                open_browser=False,
                timeout=10,
            )
        await user.finish()
    assert caught.value.error == "access_denied"
    assert user.pages[0].status_code == 400
    assert "not granted" in user.pages[0].text.lower()


async def test_denied_on_the_consent_page() -> None:
    async with serve_oauth_server(auto_approve=False) as server:
        user = Browser(server.issuer, consent="deny")
        with pytest.raises(OAuthAuthorizationDeniedError):
            await run_mcp_oauth(
                server.url,
                MemoryOAuthStore(),
                "notes",
                port=0,
                on_authorize_url=user.on_authorize_url,
                open_browser=False,
                timeout=10,
            )
        await user.finish()


async def test_callback_timeout_has_a_clear_message(auth_server: OAuthTestServer) -> None:
    port = _free_port()
    with pytest.raises(OAuthCallbackTimeoutError, match=r"within 0\.2 s.*open_browser=False"):
        await run_mcp_oauth(
            auth_server.url,
            MemoryOAuthStore(),
            "notes",
            port=port,
            on_authorize_url=lambda url: None,  # nobody ever approves
            open_browser=False,
            timeout=0.2,
        )
    assert auth_server.provider.counters.code_exchanges == 0
    # The listener is closed afterwards: the port can be bound again.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))


@pytest.fixture
def stdin_pipe(monkeypatch: pytest.MonkeyPatch) -> Iterator[IO[str]]:
    """Replace stdin with a real pipe; returns its writing end."""
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "r")
    writer = os.fdopen(write_fd, "w")
    monkeypatch.setattr("sys.stdin", reader)
    yield writer
    writer.close()
    reader.close()


@pytest.mark.parametrize("paste", ["url", "code"])
async def test_paste_back_flow(
    auth_server: OAuthTestServer,
    stdin_pipe: IO[str],
    capsys: pytest.CaptureFixture[str],
    paste: str,
) -> None:
    # The browser runs on another machine: it never reaches our listener, the person copies
    # the URL it was redirected to (or only the code) into the terminal.
    user = Browser(auth_server.issuer, deliver=False)
    done = asyncio.Event()

    async def visit_then_paste(url: str) -> None:
        await user.visit(url)
        landed = user.landed[0]
        text = landed if paste == "url" else parse_qs(urlparse(landed).query)["code"][0]
        stdin_pipe.write(text + "\n")
        stdin_pipe.flush()
        done.set()

    tasks: list[asyncio.Task[None]] = []
    original = webbrowser.open
    result = await run_mcp_oauth(
        auth_server.url,
        MemoryOAuthStore(),
        "notes",
        port=0,
        on_progress=lambda m: (
            tasks.append(asyncio.create_task(visit_then_paste(_printed_url(capsys))))
            if "stdin" in m
            else None
        ),
        open_browser=False,
        timeout=10,
    )
    await asyncio.gather(*tasks)
    assert done.is_set()
    assert webbrowser.open is original
    assert result.status == "AUTHORIZED"
    assert user.pages == []  # the listener was never reached


def _printed_url(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "paste the URL" in err
    return next(line.strip() for line in err.splitlines() if line.strip().startswith("http"))


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_pre_registered_client(
    auth_server: OAuthTestServer, browser: Callable[..., Browser], method: str
) -> None:
    port = _free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    auth_server.provider.add_client(
        "static-client", "static-secret-value", [redirect], token_endpoint_auth_method=method
    )
    store = MemoryOAuthStore()
    user = browser()
    result = await run_mcp_oauth(
        auth_server.url,
        store,
        "notes",
        port=port,
        pre_registered_client={
            "client_id": "static-client",
            "client_secret": "static-secret-value",
            "token_endpoint_auth_method": method,
        },
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        timeout=10,
    )
    await user.finish()
    assert result.status == "AUTHORIZED"
    assert auth_server.provider.counters.registrations == 0
    state = await store.get("notes")
    assert state is not None and state.client is not None
    assert state.client.client_id == "static-client"
    # The refresh authenticates with the secret the same way.
    auth_server.provider.expire_access_tokens()
    source = OAuthTokenSource(store, "notes", auth_server.url, min_refresh_interval=0)
    await source.access_token(force_refresh=True)
    assert auth_server.provider.counters.refresh_requests == 1
    assert auth_server.provider.counters.refresh_rejected == 0


async def test_scope_and_verify_by_tool_call(
    auth_server: OAuthTestServer, browser: Callable[..., Browser]
) -> None:
    store = MemoryOAuthStore()
    user = browser()
    result = await run_mcp_oauth(
        auth_server.url,
        store,
        "notes",
        port=0,
        scope="notes:read",
        verify=VerifyToolCall("search_pages", {"query": "roadmap"}),
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        timeout=10,
    )
    await user.finish()
    assert result.tool_count is None
    assert "Roadmap" in result.verify_result
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    assert state.tokens.scope == "notes:read"


async def test_secrets_never_reach_logs_or_reprs(
    auth_server: OAuthTestServer,
    browser: Callable[..., Browser],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG)
    store = FsOAuthStore(tmp_path / "oauth.json")
    user = browser()
    await run_mcp_oauth(
        auth_server.url,
        store,
        "notes",
        port=0,
        token_endpoint_auth_method="client_secret_post",
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        timeout=10,
    )
    await user.finish()
    source = OAuthTokenSource(store, "notes", auth_server.url, min_refresh_interval=0)
    await source.access_token(force_refresh=True)
    auth_server.provider.revoke_all()
    failure: Exception | None = None
    try:
        await source.access_token(force_refresh=True)
    except Exception as exc:
        failure = exc
    assert failure is not None
    state = await store.get("notes")
    assert state is not None and state.tokens is not None and state.client is not None
    assert state.client.client_secret is not None and state.tokens.refresh_token is not None
    secrets = [
        state.tokens.access_token.get_secret_value(),
        state.tokens.refresh_token.get_secret_value(),
        state.client.client_secret.get_secret_value(),
    ]
    texts: list[Any] = [caplog.text, repr(state), str(state), repr(source), repr(store)]
    texts += [str(failure), repr(failure), repr(state.tokens), repr(state.client)]
    for text in texts:
        for secret in secrets:
            assert secret not in str(text)


async def test_no_display_falls_back_to_headless(
    auth_server: OAuthTestServer,
    browser: Callable[..., Browser],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def must_not_open(url: str) -> bool:
        raise AssertionError("no display: the browser must not be launched")

    monkeypatch.setattr(webbrowser, "open", must_not_open)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    user = browser()
    progress: list[str] = []
    result = await run_mcp_oauth(
        auth_server.url,
        MemoryOAuthStore(),
        "notes",
        port=0,
        on_authorize_url=user.on_authorize_url,
        on_progress=progress.append,
        timeout=10,
    )
    await user.finish()
    assert result.status == "AUTHORIZED"
    assert any("stdin" in message for message in progress)
