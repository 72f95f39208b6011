"""``stored_logins``: a login's tokens for an agent — nothing before a login, the token after,
refreshed through the OAuth token source (the refresh itself is covered by the token source's
tests and by the examples' login-then-agent test against the local OAuth server)."""

from __future__ import annotations

import time

from pydantic import SecretStr

from glove_mcp.auth import TokenSource
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.oauth import MemoryOAuthStore
from glove_mcp.oauth.state import StoredTokens, empty_oauth_state
from glove_mcp.oauth.stored_login import stored_logins
from glove_mcp.resource_keys import credential_key

ENTRY = McpCatalogueEntry(id="tracker", name="Tracker", description="Issues.", url="http://x/mcp")
STDIO = McpCatalogueEntry(id="local", name="Local", description="Files.", command=["local-mcp"])


async def test_nothing_is_sent_before_a_login_and_the_token_after() -> None:
    store = MemoryOAuthStore()
    login = stored_logins(store, [ENTRY])["tracker"]
    key = credential_key("default", ENTRY.url)
    assert isinstance(login, TokenSource)
    assert await login.access_token() is None
    await store.set(key, empty_oauth_state(ENTRY.url))
    assert await login.access_token() is None  # a login that never finished
    state = empty_oauth_state(ENTRY.url).model_copy(
        update={
            "tokens": StoredTokens(
                access_token=SecretStr("secret-token"), expires_at=time.time() + 3600
            )
        }
    )
    await store.set(key, state)
    assert await login.access_token() == "secret-token"
    assert "secret-token" not in repr(login)


def test_one_source_per_http_server() -> None:
    logins = stored_logins(MemoryOAuthStore(), [ENTRY, STDIO])
    assert list(logins) == ["tracker"]
