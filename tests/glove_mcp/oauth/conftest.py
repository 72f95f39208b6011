"""Fixtures for the OAuth tests: a local authorization server and a simulated browser."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from glove_mcp.testing.oauth_server import OAuthTestServer, serve_oauth_server
from tests.glove_mcp.oauth._browser import Browser


@pytest.fixture
async def auth_server() -> AsyncIterator[OAuthTestServer]:
    """A notes MCP server behind the local authorization server."""
    async with serve_oauth_server() as server:
        yield server


@pytest.fixture
def browser(auth_server: OAuthTestServer) -> Callable[..., Browser]:
    """Make a simulated browser for the auth server."""

    def make(deliver: bool = True, consent: str = "approve") -> Browser:
        return Browser(auth_server.issuer, deliver=deliver, consent=consent)

    return make
