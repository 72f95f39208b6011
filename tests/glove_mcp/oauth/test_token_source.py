"""OAuthTokenSource and McpOAuthProvider after a login: silent refresh, rotation, revocation,
single flight across tasks and across real processes."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest

from glove_mcp.errors import (
    OAuthLoginRequiredError,
    OAuthRefreshError,
    OAuthRefreshRejectedError,
)
from glove_mcp.oauth import (
    FsOAuthStore,
    McpOAuthProvider,
    MemoryOAuthStore,
    OAuthStore,
    OAuthTokenSource,
    build_client_metadata,
    run_mcp_oauth,
)
from glove_mcp.testing.oauth_server import OAuthTestServer
from tests._backends import Backend
from tests.glove_mcp.oauth._browser import Browser


async def _login(server: OAuthTestServer, store: OAuthStore, make: Callable[..., Browser]) -> None:
    user = make()
    await run_mcp_oauth(
        server.url,
        store,
        "notes",
        port=0,
        on_authorize_url=user.on_authorize_url,
        open_browser=False,
        timeout=10,
        verify=None,
    )
    await user.finish()


async def _let_time_pass(server: OAuthTestServer, store: OAuthStore) -> None:
    """The access token's lifetime is over: on the server, and in the stored absolute expiry."""
    server.provider.expire_access_tokens()
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    aged = state.tokens.model_copy(update={"expires_at": time.time() - 5})
    await store.set("notes", state.model_copy(update={"tokens": aged}))


def _refresh_token(state: object) -> str:
    tokens = getattr(state, "tokens", None)
    assert tokens is not None and tokens.refresh_token is not None
    value: str = tokens.refresh_token.get_secret_value()
    return value


async def test_restart_with_expired_token_refreshes_without_browser(
    auth_server: OAuthTestServer, browser: Callable[..., Browser], tmp_path: Path
) -> None:
    path = tmp_path / "oauth.json"
    await _login(auth_server, FsOAuthStore(path), browser)
    await _let_time_pass(auth_server, FsOAuthStore(path))
    counters = auth_server.provider.counters

    def no_browser(url: str) -> None:
        raise AssertionError("a restart must refresh, not log in again")

    # A new process would build everything anew from the file.
    result = await run_mcp_oauth(
        auth_server.url, FsOAuthStore(path), "notes", port=0, on_authorize_url=no_browser
    )
    assert result.status == "ALREADY_AUTHORIZED"
    assert counters.refresh_requests == 1
    assert counters.authorizations == 1


async def test_sdk_provider_restores_absolute_expiry_and_refreshes(
    auth_server: OAuthTestServer, browser: Callable[..., Browser], tmp_path: Path
) -> None:
    path = tmp_path / "oauth.json"
    await _login(auth_server, FsOAuthStore(path), browser)
    await _let_time_pass(auth_server, FsOAuthStore(path))

    async def no_browser(url: str) -> None:
        raise AssertionError("the provider must refresh, not log in again")

    state = await FsOAuthStore(path).get("notes")
    assert state is not None and state.redirect_url is not None
    provider = McpOAuthProvider(
        auth_server.url,
        FsOAuthStore(path),
        "notes",
        build_client_metadata(state.redirect_url),
        redirect_handler=no_browser,
    )
    async with httpx2.AsyncClient(auth=provider) as client:
        response = await client.get(auth_server.url, headers={"Accept": "text/event-stream"})
    assert response.status_code != 401
    assert auth_server.provider.counters.refresh_requests == 1
    assert auth_server.provider.counters.authorizations == 1
    new_state = await FsOAuthStore(path).get("notes")
    assert _refresh_token(new_state) != _refresh_token(state)


async def test_rotated_refresh_token_is_persisted(
    auth_server: OAuthTestServer, browser: Callable[..., Browser], tmp_path: Path
) -> None:
    path = tmp_path / "oauth.json"
    await _login(auth_server, FsOAuthStore(path), browser)
    before = await FsOAuthStore(path).get("notes")
    await _let_time_pass(auth_server, FsOAuthStore(path))
    source = OAuthTokenSource(FsOAuthStore(path), "notes", auth_server.url)
    token = await source.access_token()
    after = await FsOAuthStore(path).get("notes")  # read back from disk
    assert after is not None and after.tokens is not None
    assert after.tokens.access_token.get_secret_value() == token
    old_rt, new_rt = _refresh_token(before), _refresh_token(after)
    assert old_rt != new_rt
    assert not auth_server.provider.is_refresh_token_active(old_rt)
    assert auth_server.provider.is_refresh_token_active(new_rt)
    assert after.tokens.expires_at is not None and after.tokens.expires_at > time.time()
    # The stored token works against the MCP server.
    async with httpx2.AsyncClient() as client:
        ok = await client.get(
            auth_server.url,
            headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
        )
    assert ok.status_code != 401


async def test_refresh_ahead_of_expiry_with_skew(
    auth_server: OAuthTestServer, browser: Callable[..., Browser]
) -> None:
    store = MemoryOAuthStore()
    await _login(auth_server, store, browser)
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    current = state.tokens.access_token.get_secret_value()
    soon = state.tokens.model_copy(update={"expires_at": time.time() + 30})
    await store.set("notes", state.model_copy(update={"tokens": soon}))
    lenient = OAuthTokenSource(store, "notes", skew=10)
    assert await lenient.access_token() == current
    assert auth_server.provider.counters.refresh_requests == 0
    strict = OAuthTokenSource(store, "notes", skew=120)
    assert await strict.access_token() != current
    assert auth_server.provider.counters.refresh_requests == 1


async def test_after_a_401_concurrent_tasks_refresh_once(
    auth_server: OAuthTestServer, browser: Callable[..., Browser]
) -> None:
    store = MemoryOAuthStore()
    await _login(auth_server, store, browser)
    source = OAuthTokenSource(store, "notes")
    rejected = await source.access_token()
    auth_server.provider.expire_access_tokens()  # the server says 401 to it
    await source.invalidate(rejected)
    tokens = await asyncio.gather(*(source.access_token() for _ in range(8)))
    assert len(set(tokens)) == 1 and tokens[0] != rejected
    assert auth_server.provider.counters.refresh_requests == 1
    # Late 401s for the old token right after the refresh: no refresh storm.
    late = await asyncio.gather(*(source.access_token(force_refresh=True) for _ in range(4)))
    assert set(late) == {tokens[0]}
    assert auth_server.provider.counters.refresh_requests == 1
    # force_refresh from many tasks that all saw the same rejected token: still one refresh.
    eager = OAuthTokenSource(store, "notes", min_refresh_interval=0)
    forced = await asyncio.gather(*(eager.access_token(force_refresh=True) for _ in range(4)))
    assert len(set(forced)) == 1 and forced[0] != tokens[0]
    assert auth_server.provider.counters.refresh_requests == 2


async def test_revoked_refresh_token_names_the_login_command(
    auth_server: OAuthTestServer, browser: Callable[..., Browser]
) -> None:
    store = MemoryOAuthStore()
    await _login(auth_server, store, browser)
    state = await store.get("notes")
    assert state is not None and state.client is not None and state.revocation_endpoint
    # Revoke through the real RFC 7009 endpoint.
    async with httpx2.AsyncClient() as client:
        response = await client.post(
            state.revocation_endpoint,
            # The SDK's revocation handler wants the client_secret field, even if empty.
            data={
                "token": _refresh_token(state),
                "client_id": state.client.client_id,
                "client_secret": "",
            },
        )
    assert response.status_code == 200
    await _let_time_pass(auth_server, store)
    source = OAuthTokenSource(store, "notes", login_command="glove-mcp login notes")
    with pytest.raises(OAuthRefreshRejectedError, match="invalid_grant") as caught:
        await source.access_token()
    assert "glove-mcp login notes" in str(caught.value)
    assert isinstance(caught.value, OAuthLoginRequiredError)
    assert caught.value.key == "notes"
    # The default names run_mcp_oauth with the key.
    with pytest.raises(OAuthLoginRequiredError, match=r"run_mcp_oauth\(.*key='notes'"):
        await OAuthTokenSource(store, "notes", auth_server.url).access_token()


async def test_no_tokens_means_login_required() -> None:
    with pytest.raises(OAuthLoginRequiredError, match="no tokens are stored"):
        await OAuthTokenSource(MemoryOAuthStore(), "linear").access_token()


async def test_unreachable_server_is_a_retryable_error(
    auth_server: OAuthTestServer, browser: Callable[..., Browser]
) -> None:
    store = MemoryOAuthStore()
    await _login(auth_server, store, browser)
    await _let_time_pass(auth_server, store)
    before = await store.get("notes")
    await auth_server.http.stop()
    with pytest.raises(OAuthRefreshError, match="try again"):
        await OAuthTokenSource(store, "notes").access_token()
    assert await store.get("notes") == before  # nothing lost
    await auth_server.http.start()
    assert await OAuthTokenSource(store, "notes").access_token()


_CHILD = """
import asyncio, contextlib, hashlib, logging, sys
from glove_mcp.oauth import FsOAuthStore, OAuthTokenSource

logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
logging.getLogger("glove_mcp.oauth.token_source").setLevel(logging.DEBUG)

async def main() -> None:
    async with contextlib.AsyncExitStack() as stack:
        if sys.argv[1].startswith("postgresql://"):
            from glove_core.postgres import PostgresDatabase
            from glove_mcp.oauth.postgres_store import PostgresOAuthStore
            db = await stack.enter_async_context(PostgresDatabase(sys.argv[1]))
            store = PostgresOAuthStore(db)
        else:
            store = FsOAuthStore(sys.argv[1])
        source = OAuthTokenSource(store, "notes")
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        token = await source.access_token()
        print("token", hashlib.sha256(token.encode()).hexdigest(), source.refresh_count, flush=True)

asyncio.run(main())
"""


async def _line_containing(stream: asyncio.StreamReader, marker: bytes) -> None:
    while True:
        line = await stream.readline()
        assert line, f"stream ended before {marker!r}"
        if marker in line:
            return


async def test_three_processes_refresh_once(
    auth_server: OAuthTestServer, browser: Callable[..., Browser], tmp_path: Path, backend: Backend
) -> None:
    # On PostgreSQL the three could as well run on three machines: the lock is in the database.
    path = str(tmp_path / "oauth.json") if backend.kind == "sqlite" else backend.where
    store = await backend.oauth_store(path)
    await _login(auth_server, store, browser)
    await _let_time_pass(auth_server, store)

    # Hold the first refresh at the server until both processes have decided to refresh.
    gate = asyncio.Event()

    async def hold(grant: str) -> None:
        if grant == "refresh_token":
            await gate.wait()

    auth_server.provider.on_token_request = hold
    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CHILD,
            path,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(3)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert await child.stdout.readline() == b"ready\n"
        for child in children:
            assert child.stdin is not None
            child.stdin.write(b"go\n")
            await child.stdin.drain()
        for child in children:
            assert child.stderr is not None
            await asyncio.wait_for(_line_containing(child.stderr, b"waiting for the lock"), 60)
        gate.set()
        outputs = [await asyncio.wait_for(child.communicate(), 30) for child in children]
    finally:
        for child in children:
            if child.returncode is None:
                child.kill()
                await child.wait()
    results = [out.decode().split() for out, _ in outputs]
    assert [child.returncode for child in children] == [0, 0, 0], [e for _, e in outputs]
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    stored = hashlib.sha256(state.tokens.access_token.get_secret_value().encode()).hexdigest()
    assert [r[1] for r in results] == [stored, stored, stored]
    assert sorted(int(r[2]) for r in results) == [0, 0, 1]
    assert auth_server.provider.counters.refresh_requests == 1
    assert auth_server.provider.counters.refresh_rejected == 0
