"""Issue 16, item 11: a request to the OAuth callback listener that is not for the login in
progress (no ``state``, a forged one, an ``error=`` from elsewhere) used to end the login.
The listener's port is fixed and known, so any web page can send the browser there. Now
such requests get a 400 page and are ignored; the real callback still completes the login."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlparse

import httpx2
import pytest

from glove_mcp.oauth import MemoryOAuthStore, run_mcp_oauth
from glove_mcp.testing.oauth_server import OAuthTestServer, serve_oauth_server
from tests.glove_mcp.oauth._browser import Browser

HOSTILE_QUERIES = (
    "",  # a bare GET /callback
    "?code=attacker-code",  # a code with no state
    "?code=attacker-code&state=forged-state",  # a forged state
    "?error=access_denied",  # an error with no state
    "?error=access_denied&state=forged-state",
)


@pytest.fixture
async def auth_server() -> AsyncIterator[OAuthTestServer]:
    async with serve_oauth_server() as server:
        yield server


async def test_callbacks_for_other_logins_are_ignored_until_the_real_one(
    auth_server: OAuthTestServer, caplog: pytest.LogCaptureFixture
) -> None:
    pages: list[httpx2.Response] = []
    tasks: list[asyncio.Task[None]] = []
    user = Browser(auth_server.issuer)

    async def hostile_page_then_person(url: str) -> None:
        redirect = parse_qs(urlparse(url).query)["redirect_uri"][0]
        async with httpx2.AsyncClient() as client:
            for query in HOSTILE_QUERIES:
                pages.append(await client.get(redirect + query))
        await user.visit(url)  # the person approves afterwards

    store = MemoryOAuthStore()
    with caplog.at_level(logging.WARNING, logger="glove_mcp.oauth"):
        result = await run_mcp_oauth(
            auth_server.url,
            store,
            "notes",
            port=0,
            on_authorize_url=lambda url: tasks.append(
                asyncio.create_task(hostile_page_then_person(url))
            ),
            open_browser=False,
            timeout=10,
        )
    await asyncio.gather(*tasks)
    assert result.status == "AUTHORIZED"
    assert [page.status_code for page in pages] == [400] * len(HOSTILE_QUERIES)
    assert all("login in progress" in page.text or "neither" in page.text for page in pages)
    assert user.pages[0].status_code == 200
    # Only the person's code was exchanged; the attacker's never reached the token endpoint.
    assert auth_server.provider.counters.code_exchanges == 1
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    ignored = [r for r in caplog.records if "ignored a request" in r.getMessage()]
    assert len(ignored) == 4  # the bare GET carries no callback at all


async def test_only_hostile_callbacks_end_in_the_timeout_not_a_state_error(
    auth_server: OAuthTestServer,
) -> None:
    from glove_mcp.errors import OAuthCallbackTimeoutError

    async def forge(url: str) -> None:
        redirect = parse_qs(urlparse(url).query)["redirect_uri"][0]
        async with httpx2.AsyncClient() as client:
            await client.get(f"{redirect}?code=attacker-code&state=forged-state")

    tasks: list[asyncio.Task[None]] = []
    store = MemoryOAuthStore()
    with pytest.raises(OAuthCallbackTimeoutError):
        await run_mcp_oauth(
            auth_server.url,
            store,
            "notes",
            port=0,
            on_authorize_url=lambda url: tasks.append(asyncio.create_task(forge(url))),
            open_browser=False,
            timeout=1.0,
        )
    await asyncio.gather(*tasks)
    assert auth_server.provider.counters.code_exchanges == 0
    assert await store.get("notes") is None
