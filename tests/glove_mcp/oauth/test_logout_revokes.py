"""Issue 16, item 13: ``glove-mcp logout`` deleted the local tokens but never told the
authorization server, so the refresh token kept working there. Now a logout revokes the
tokens at the server's revocation endpoint (RFC 7009) first, and deletes them only after; a
revocation that fails keeps them and says how to retry or delete anyway."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from glove_mcp.errors import OAuthRefreshRejectedError, OAuthRevocationError
from glove_mcp.oauth import (
    FsOAuthStore,
    MemoryOAuthStore,
    OAuthTokenSource,
    credential_key,
    run_mcp_oauth,
)
from glove_mcp.testing import OAuthTestServer, serve_oauth_server
from glove_mcp.testing.servers import build_tracker_server
from tests.glove_mcp.cli._commands import in_process
from tests.glove_mcp.cli.test_main import run_cli, write_catalogue
from tests.glove_mcp.oauth._browser import Browser


@pytest.fixture
async def protected() -> AsyncIterator[OAuthTestServer]:
    async with serve_oauth_server(build_tracker_server) as server:
        yield server


async def _log_in(server: OAuthTestServer, home: Path) -> FsOAuthStore:
    store = FsOAuthStore(home / "oauth.json")  # the command's default store under GLOVE_HOME
    user = Browser(server.issuer)
    await run_mcp_oauth(
        server.url,
        store,
        credential_key("default", server.url),  # where `glove-mcp auth` keeps it
        port=0,
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        timeout=10,
    )
    await user.finish()
    return store


async def test_logout_revokes_the_refresh_token_at_the_server(
    protected: OAuthTestServer, tmp_path: Path
) -> None:
    store = await _log_in(protected, tmp_path)
    before = await store.get(credential_key("default", protected.url))
    assert before is not None and before.revocation_endpoint is not None
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=protected.url)

    status, out, err = await run_cli(
        "logout", "tracker", "--catalogue", str(catalogue), home=tmp_path
    )

    assert status == 0, err
    assert "revoked at the server and deleted" in out
    assert await store.get(credential_key("default", protected.url)) is None
    assert protected.provider.counters.revocations >= 1
    # The attack: someone kept a copy of the refresh token. It no longer works.
    copy = MemoryOAuthStore()
    await copy.set("tracker", before)
    with pytest.raises(OAuthRefreshRejectedError):
        source = OAuthTokenSource(copy, "tracker", protected.url, min_refresh_interval=0)
        await source.access_token(force_refresh=True)


def test_a_failed_revocation_keeps_the_tokens_and_names_the_way_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def log_in_then_stop_the_server() -> tuple[FsOAuthStore, str]:
        async with serve_oauth_server(build_tracker_server) as server:
            return await _log_in(server, tmp_path), server.url

    store, url = asyncio.run(log_in_then_stop_the_server())
    # The authorization server is gone: revoking cannot succeed.
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=url)
    before = asyncio.run(store.get(credential_key("default", url)))

    ran = in_process(
        "logout", "tracker", "--catalogue", str(catalogue), home=tmp_path, capsys=capsys
    )

    assert ran.status == 1
    assert "not revoked and are kept" in ran.err and "--local-only" in ran.err
    assert "Traceback" not in ran.err
    assert asyncio.run(store.get(credential_key("default", url))) == before  # nothing lost

    ran = in_process(
        "logout",
        "tracker",
        "--local-only",
        "--catalogue",
        str(catalogue),
        home=tmp_path,
        capsys=capsys,
    )
    assert ran.status == 0, ran.err
    assert "not revoked at the server" in ran.out
    assert asyncio.run(store.get(credential_key("default", url))) is None


async def test_revoke_in_the_library(protected: OAuthTestServer, tmp_path: Path) -> None:
    store = await _log_in(protected, tmp_path)
    state = await store.get(credential_key("default", protected.url))
    assert state is not None
    source = OAuthTokenSource(store, credential_key("default", protected.url), protected.url)
    assert await source.revoke() == "revoked"
    assert (
        await store.get(credential_key("default", protected.url)) == state
    )  # the caller decides when to forget them

    memory = MemoryOAuthStore()
    assert await OAuthTokenSource(memory, "tracker").revoke() == "no_tokens"
    await memory.set("tracker", state.model_copy(update={"revocation_endpoint": None}))
    assert await OAuthTokenSource(memory, "tracker").revoke() == "no_revocation_endpoint"
    await memory.set(
        "tracker", state.model_copy(update={"revocation_endpoint": "http://127.0.0.1:9/revoke"})
    )
    with pytest.raises(
        OAuthRevocationError, match=r"'tracker' at http://127\.0\.0\.1:9/revoke"
    ) as caught:
        await OAuthTokenSource(memory, "tracker").revoke()
    token = state.tokens.access_token.get_secret_value() if state.tokens else "?"
    assert token not in str(caught.value)
