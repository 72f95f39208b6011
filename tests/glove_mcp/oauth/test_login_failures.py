"""Every way a login can fail ends in one line that names the server and what to do, and leaves
the store as it was: no token-less entry, old tokens kept. Also: logins through the
``authorize`` seam, against a server that routes only POST, and a server that needs no login."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlparse

import httpx2
import pytest

from glove_mcp.errors import (
    OAuthAuthorizationDeniedError,
    OAuthCallbackTimeoutError,
    OAuthFlowError,
    OAuthStateMismatchError,
)
from glove_mcp.oauth import (
    Authorizer,
    McpOAuthProvider,
    MemoryOAuthStore,
    OAuthTokenSource,
    build_client_metadata,
    client_credentials_auth,
    run_mcp_oauth,
)
from glove_mcp.testing import McpTestServer, ServerControl
from glove_mcp.testing.oauth_server import OAuthTestServer


async def follow(url: str) -> str:
    """A browser that approves at once: open the URL, return where it redirects."""
    async with httpx2.AsyncClient(follow_redirects=False) as client:
        response = await client.get(url)
    assert response.status_code in (302, 303, 307), response.text
    return response.headers["location"]


def assert_one_line_about(exc: BaseException, server: OAuthTestServer | str) -> str:
    text = str(exc)
    url = server if isinstance(server, str) else server.url
    assert "\n" not in text
    assert "'notes'" in text and url in text
    assert "Traceback" not in text and "ExceptionGroup" not in text
    return text


async def failed_login(
    server: OAuthTestServer,
    error: type[OAuthFlowError],
    authorize: Authorizer = follow,
    approval_time: float = 300,
) -> str:
    """Log in and expect ``error``: one line about the login, and nothing left in the store.
    Returns the message."""
    store = MemoryOAuthStore()
    with pytest.raises(error) as caught:
        await run_mcp_oauth(server.url, store, "notes", authorize=authorize, timeout=approval_time)
    text = assert_one_line_about(caught.value, server)
    assert await store.get("notes") is None
    return text


async def test_the_authorize_seam_completes_a_login_without_listener_or_browser(
    auth_server: OAuthTestServer,
) -> None:
    store = MemoryOAuthStore()
    seen: list[str] = []
    result = await run_mcp_oauth(
        auth_server.url, store, "notes", authorize=follow, on_authorize_url=seen.append
    )
    assert result.status == "AUTHORIZED"
    assert result.redirect_url == "http://127.0.0.1:53683/callback"  # registered, never bound
    assert len(seen) == 1 and parse_qs(urlparse(seen[0]).query)["code_challenge_method"] == ["S256"]
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    token = await OAuthTokenSource(store, "notes", auth_server.url).access_token()
    assert token == state.tokens.access_token.get_secret_value()


async def test_a_server_that_routes_only_post_still_gets_a_login(
    auth_server: OAuthTestServer,
) -> None:
    auth_server.http.control.post_only = True
    async with httpx2.AsyncClient() as client:
        assert (await client.get(auth_server.url)).status_code == 404  # what broke the GET probe
    store = MemoryOAuthStore()
    result = await run_mcp_oauth(auth_server.url, store, "notes", authorize=follow)
    assert result.status == "AUTHORIZED" and result.tool_count
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    assert auth_server.provider.counters.code_exchanges == 1


async def test_a_server_that_needs_no_login_is_not_reported_as_logged_in() -> None:
    store = MemoryOAuthStore()
    async with McpTestServer("notes") as open_server:
        with pytest.raises(OAuthFlowError) as caught:
            await run_mcp_oauth(open_server.url, store, "notes", authorize=follow)
    text = assert_one_line_about(caught.value, open_server.url)
    assert "needs no login" in text and "without OAuth" in text
    assert await store.get("notes") is None


async def test_denied_consent(auth_server: OAuthTestServer) -> None:
    auth_server.provider.deny = True
    text = await failed_login(auth_server, OAuthAuthorizationDeniedError)
    assert "access_denied" in text and "Approve the request" in text


async def test_no_approval_in_time(auth_server: OAuthTestServer) -> None:
    async def never(url: str) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    text = await failed_login(auth_server, OAuthCallbackTimeoutError, never, approval_time=0.3)
    assert "within 0.3 s" in text


async def test_an_authorization_server_naming_another_issuer(
    auth_server: OAuthTestServer,
) -> None:
    auth_server.provider.advertised_issuer = "http://127.0.0.1:9/impostor"
    text = await failed_login(auth_server, OAuthFlowError)
    assert "issuer" in text and "not the one the MCP server names" in text
    assert auth_server.provider.counters.registrations == 0  # stopped before registering


async def test_an_unsupported_grant(auth_server: OAuthTestServer) -> None:
    auth_server.provider.refuse_code_grant = True
    text = await failed_login(auth_server, OAuthFlowError)
    assert "unsupported_grant_type" in text and "does not issue tokens" in text


async def test_registration_refused(auth_server: OAuthTestServer) -> None:
    auth_server.provider.refuse_registration = True
    text = await failed_login(auth_server, OAuthFlowError)
    assert "refused to register" in text and "pre_registered_client" in text


@pytest.mark.parametrize(
    ("pasted", "error", "words"),
    [
        ("http://127.0.0.1:53683/callback?foo=bar", OAuthFlowError, "neither a code nor"),
        ("   ", OAuthFlowError, "returned nothing"),
        ("http://127.0.0.1:53683/callback?code=x&state=forged", OAuthStateMismatchError, "state"),
        ("this is not a code", OAuthFlowError, "code was not accepted"),
    ],
)
async def test_pasted_garbage(
    auth_server: OAuthTestServer, pasted: str, error: type[OAuthFlowError], words: str
) -> None:
    async def paste(url: str) -> str:
        return pasted

    assert words in await failed_login(auth_server, error, paste)


async def test_a_failed_login_again_keeps_the_old_tokens(auth_server: OAuthTestServer) -> None:
    store = MemoryOAuthStore()
    await run_mcp_oauth(auth_server.url, store, "notes", authorize=follow)
    before = await store.get("notes")
    auth_server.provider.revoke_all()  # the stored tokens stop working
    auth_server.provider.deny = True
    with pytest.raises(OAuthAuthorizationDeniedError):
        await run_mcp_oauth(auth_server.url, store, "notes", authorize=follow)
    assert await store.get("notes") == before


def test_bad_arguments_are_refused_with_the_fix() -> None:
    metadata = build_client_metadata("http://127.0.0.1:1/callback")
    with pytest.raises(ValueError, match="HTTPS URL with a path"):
        McpOAuthProvider(
            "http://x/mcp", MemoryOAuthStore(), "k", metadata, client_metadata_url="http://x"
        )

    async def approve(url: str) -> str:
        return url

    async def redirect(url: str) -> None:
        return None

    with pytest.raises(ValueError, match="authorize= or redirect_handler"):
        McpOAuthProvider(
            "http://x/mcp", MemoryOAuthStore(), "k", metadata, redirect, authorize=approve
        )
    with pytest.raises(ValueError, match="exactly one"):
        client_credentials_auth("http://x/mcp", "id")
    with pytest.raises(ValueError, match="exactly one"):
        client_credentials_auth("http://x/mcp", "id", client_secret="s", private_key="k")


async def test_a_live_connection_reports_a_failed_login_as_oauth_not_unreachable(
    auth_server: OAuthTestServer,
) -> None:
    from glove_mcp import connect_mcp

    auth_server.provider.deny = True
    provider = McpOAuthProvider(
        auth_server.url,
        MemoryOAuthStore(),
        "notes",
        build_client_metadata("http://127.0.0.1:1/callback"),
        authorize=follow,
    )
    with pytest.raises(OAuthAuthorizationDeniedError, match="access_denied"):
        await connect_mcp("notes", auth_server.url, auth=provider)


def test_post_only_is_a_server_switch() -> None:
    assert ServerControl(post_only=True).post_only
