"""OAuthTokenSource behind the connection layer: ``bearer(source)`` refreshes after a 401."""

from __future__ import annotations

from collections.abc import Callable

from glove_mcp.auth import bearer
from glove_mcp.connect import connect_mcp
from glove_mcp.oauth import MemoryOAuthStore, OAuthTokenSource, run_mcp_oauth
from glove_mcp.testing.oauth_server import OAuthTestServer
from tests.glove_mcp.oauth._browser import Browser


async def test_bearer_source_refreshes_after_401_mid_session(
    auth_server: OAuthTestServer, browser: Callable[..., Browser]
) -> None:
    store = MemoryOAuthStore()
    user = browser()
    await run_mcp_oauth(
        auth_server.url,
        store,
        "notes",
        port=0,
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        verify=None,
    )
    await user.finish()
    # Past the de-duplication window, so the 401 below is answered by a refresh.
    source = OAuthTokenSource(store, "notes", auth_server.url, min_refresh_interval=0)
    connection = await connect_mcp("notes", auth_server.url, auth=bearer(source))
    try:
        assert len(await connection.list_tools()) > 0
        auth_server.provider.expire_access_tokens()  # the server now answers 401
        result = await connection.call_tool("search_pages", {"query": "roadmap"})
        assert "Roadmap" in str(result)
        assert auth_server.provider.counters.refresh_requests == 1
    finally:
        await connection.close()
