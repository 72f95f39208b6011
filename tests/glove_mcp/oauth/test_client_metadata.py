"""Client ID Metadata Documents first: ``run_mcp_oauth(client_metadata_url=...)`` against the
local authorization server, which fetches the document (here from a test "host") when it
advertises ``client_id_metadata_document_supported``; dynamic registration as the fallback,
with a one-line deprecation note in the log."""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest

from glove_mcp.errors import OAuthCallbackTimeoutError
from glove_mcp.oauth import MemoryOAuthStore, run_mcp_oauth
from glove_mcp.testing.oauth_server import LocalAuthProvider, serve_oauth_server
from tests.glove_mcp.oauth._browser import Browser

DOCUMENT_URL = "https://glove.example/oauth/client.json"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _document(port: int, **changes: Any) -> dict[str, Any]:
    return {
        "client_id": DOCUMENT_URL,
        "client_name": "Glove",
        "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    } | changes


def _hosting(documents: dict[str, Any], fetched: list[str]) -> Any:
    async def fetch(url: str) -> Any:
        fetched.append(url)
        return documents[url]

    return fetch


async def _login(
    url: str, issuer: str, port: int, wait: float = 10, **kwargs: Any
) -> tuple[Any, Any]:
    store = MemoryOAuthStore()
    user = Browser(issuer)
    result = await run_mcp_oauth(
        url,
        store,
        "notes",
        port=port,
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        timeout=wait,
        **kwargs,
    )
    await user.finish()
    return result, await store.get("notes")


async def test_the_document_url_is_the_client_id_where_supported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = _free_port()
    fetched: list[str] = []
    provider = LocalAuthProvider(
        client_metadata_documents=True,
        fetch_document=_hosting({DOCUMENT_URL: _document(port)}, fetched),
    )
    caplog.set_level(logging.WARNING)
    async with serve_oauth_server(provider=provider) as server:
        result, state = await _login(
            server.url, server.issuer, port, client_metadata_url=DOCUMENT_URL
        )
    assert result.status == "AUTHORIZED"
    assert state is not None and state.client is not None
    assert state.client.client_id == DOCUMENT_URL
    assert fetched == [DOCUMENT_URL]
    assert provider.counters.registrations == 0
    assert provider.counters.metadata_documents == 1
    assert "registered dynamically" not in caplog.text


async def test_without_server_support_it_registers_and_notes_the_deprecation(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = _free_port()
    provider = LocalAuthProvider(client_metadata_documents=False)
    caplog.set_level(logging.WARNING, logger="glove_mcp.oauth.provider")
    async with serve_oauth_server(provider=provider) as server:
        result, state = await _login(
            server.url, server.issuer, port, client_metadata_url=DOCUMENT_URL
        )
    assert result.status == "AUTHORIZED"
    assert state is not None and state.client is not None
    assert state.client.client_id != DOCUMENT_URL
    assert provider.counters.registrations == 1
    notes = [r for r in caplog.records if "registered dynamically" in r.getMessage()]
    assert len(notes) == 1 and notes[0].levelno == logging.WARNING
    assert "deprecated" in notes[0].getMessage()
    assert "does not support Client ID Metadata Documents" in notes[0].getMessage()


async def test_without_a_document_url_registration_is_noted_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="glove_mcp.oauth.provider")
    async with serve_oauth_server() as server:
        result, _ = await _login(server.url, server.issuer, 0)
    assert result.status == "AUTHORIZED"
    [note] = [r.getMessage() for r in caplog.records if "registered dynamically" in r.getMessage()]
    assert "client_metadata_url" in note


async def test_a_document_naming_another_client_is_refused() -> None:
    port = _free_port()
    provider = LocalAuthProvider(
        client_metadata_documents=True,
        fetch_document=_hosting(
            {DOCUMENT_URL: _document(port, client_id="https://elsewhere.example/c.json")}, []
        ),
    )
    async with serve_oauth_server(provider=provider) as server:
        with pytest.raises(OAuthCallbackTimeoutError) as caught:
            await _login(server.url, server.issuer, port, client_metadata_url=DOCUMENT_URL, wait=2)
    assert provider.counters.rejected_documents >= 1
    # The authorization server shows its error page instead of redirecting (an unknown
    # client gets no redirect), so no callback arrives: the login says so and how to retry.
    assert "Run the login again" in str(caught.value)


async def test_a_document_url_that_is_not_https_is_refused_up_front() -> None:
    async with serve_oauth_server() as server:
        with pytest.raises(ValueError, match="client_metadata_url must be an HTTPS URL"):
            await _login(
                server.url, server.issuer, 0, client_metadata_url="http://glove.example/c.json"
            )
