"""OAuth stores: memory, JSON file (mode, atomicity, corrupt/newer files), OS keyring."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from glove_mcp.errors import (
    OAuthKeyringUnavailableError,
    OAuthStoreCorruptError,
    OAuthStoreVersionError,
)
from glove_mcp.oauth import (
    FsOAuthStore,
    KeyringOAuthStore,
    LockingOAuthStore,
    MemoryOAuthStore,
    OAuthClientInfo,
    OAuthState,
    OAuthStore,
    StoredTokens,
    empty_oauth_state,
)
from glove_mcp.oauth.state import state_from_json, state_to_json

ACCESS = "at-secret-access-value"
REFRESH = "rt-secret-refresh-value"
CLIENT_SECRET = "cs-secret-client-value"


def _state(access: str = ACCESS) -> OAuthState:
    return OAuthState(
        server_url="https://mcp.example.com/mcp",
        client=OAuthClientInfo(
            client_id="client-1",
            client_secret=SecretStr(CLIENT_SECRET),
            token_endpoint_auth_method="client_secret_basic",
            full={"redirect_uris": ["http://127.0.0.1:53683/callback"]},
        ),
        tokens=StoredTokens(
            access_token=SecretStr(access),
            refresh_token=SecretStr(REFRESH),
            scope="read",
            expires_at=time.time() + 3600,
        ),
        code_verifier=SecretStr("verifier-secret-value"),
        token_endpoint="https://auth.example.com/token",
        resource="https://mcp.example.com/mcp",
    )


class MemoryKeyring(keyring.backend.KeyringBackend):
    """An in-memory keyring backend (the real keyring API, no OS service)."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)


@pytest.fixture
def default_keyring() -> Iterator[MemoryKeyring]:
    """Install an in-memory keyring as the process default, restoring the old one after."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


async def _round_trip(store: OAuthStore) -> None:
    assert await store.get("notion") is None
    await store.set("notion", _state())
    await store.set("linear", _state("other-access"))
    got = await store.get("notion")
    assert got == _state().model_copy(update={"tokens": got.tokens if got else None})
    assert got is not None and got.tokens is not None
    assert got.tokens.access_token.get_secret_value() == ACCESS
    assert got.client is not None and got.client.client_secret is not None
    assert got.client.client_secret.get_secret_value() == CLIENT_SECRET
    await store.delete("notion")
    await store.delete("notion")  # idempotent
    assert await store.get("notion") is None
    assert await store.get("linear") is not None
    await store.clear()
    assert await store.get("linear") is None


async def test_postgres_store_round_trip_find_and_lock(postgres_url: str) -> None:
    from glove_core.postgres import PostgresDatabase
    from glove_mcp.oauth.postgres_store import PostgresOAuthStore

    async with PostgresDatabase(postgres_url) as db:
        store = PostgresOAuthStore(db)
        assert isinstance(store, LockingOAuthStore)
        await _round_trip(store)
        first = _state().model_copy(update={"server_url": "https://mcp/a", "issuer": "https://as1"})
        await store.set("a-as1", first)
        await store.set("a-as2", first.model_copy(update={"issuer": "https://as2"}))
        assert await store.find("https://mcp/a", "https://as1") == ["a-as1"]
        assert await store.find("https://mcp/a", None) == ["a-as1", "a-as2"]
        async with store.lock("a-as1"):
            await store.set("a-as1", first)  # the holder's own calls still work
        assert ACCESS not in repr(store)


async def test_memory_store_round_trip() -> None:
    store = MemoryOAuthStore()
    assert isinstance(store, LockingOAuthStore)
    await _round_trip(store)


async def test_file_store_round_trip_mode_and_atomic_files(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "oauth.json"
    store = FsOAuthStore(path)
    assert isinstance(store, LockingOAuthStore)
    await _round_trip(store)
    await store.set("notion", _state())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["oauth.json", "oauth.json.lock"]
    doc = json.loads(path.read_text())
    assert doc["format"] == "glove-mcp-oauth" and doc["version"] == 1
    assert doc["entries"]["notion"]["tokens"]["access_token"] == ACCESS
    # Another instance (another process) reads the same file.
    other = await FsOAuthStore(path).get("notion")
    assert other is not None and other.tokens is not None
    assert other.tokens.expires_at == pytest.approx(_state().tokens.expires_at, abs=5)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe", b"[]", b'{"format": "other", "version": 1, "entries": {}}'],
)
async def test_corrupt_file_is_a_clear_error_and_never_overwritten(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "oauth.json"
    path.write_bytes(content)
    store = FsOAuthStore(path)
    with pytest.raises(OAuthStoreCorruptError, match=r"oauth\.json is corrupt"):
        await store.get("notion")
    with pytest.raises(OAuthStoreCorruptError):
        await store.set("notion", _state())
    with pytest.raises(OAuthStoreCorruptError):
        await store.clear()
    assert path.read_bytes() == content


async def test_corrupt_entry_is_reported_with_its_key(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    doc = {"format": "glove-mcp-oauth", "version": 1, "entries": {"notion": {"tokens": 5}}}
    path.write_text(json.dumps(doc))
    with pytest.raises(OAuthStoreCorruptError, match="'notion'"):
        await FsOAuthStore(path).get("notion")


async def test_newer_file_version_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    content = json.dumps({"format": "glove-mcp-oauth", "version": 2, "entries": {}}).encode()
    path.write_bytes(content)
    with pytest.raises(OAuthStoreVersionError, match="version 2") as caught:
        await FsOAuthStore(path).set("notion", _state())
    assert "upgrade" in str(caught.value).lower()
    assert path.read_bytes() == content


async def test_keyring_store_with_in_memory_backend(default_keyring: MemoryKeyring) -> None:
    store = KeyringOAuthStore()
    assert isinstance(store, LockingOAuthStore)
    await _round_trip(store)
    await store.set("notion", _state())
    # One entry per key, plus the store's key index.
    names = sorted(user for service, user in default_keyring.entries if service == "glove-mcp")
    assert names == ["__glove_mcp_oauth_keys__", "notion"]


async def test_keyring_store_with_explicit_backend(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    store = KeyringOAuthStore("my-app", backend=backend, lock_path=tmp_path / "kr.lock")
    await _round_trip(store)
    async with store.lock("notion"):
        await store.set("notion", _state())  # re-entrant within the holder
    assert ("my-app", "notion") in backend.entries


async def test_keyring_store_without_backend_suggests_the_file_store() -> None:
    store = KeyringOAuthStore(backend=keyring.backends.fail.Keyring())  # type: ignore[no-untyped-call]
    with pytest.raises(OAuthKeyringUnavailableError, match="FsOAuthStore"):
        await store.get("notion")
    with pytest.raises(OAuthKeyringUnavailableError):
        await store.set("notion", _state())


async def test_keyring_store_refuses_a_newer_entry() -> None:
    backend = MemoryKeyring()
    backend.set_password("glove-mcp", "notion", json.dumps({"version": 9, "state": {}}))
    with pytest.raises(OAuthStoreVersionError):
        await KeyringOAuthStore(backend=backend).get("notion")
    backend.set_password("glove-mcp", "notion", "garbage")
    with pytest.raises(OAuthStoreCorruptError):
        await KeyringOAuthStore(backend=backend).get("notion")


def test_reprs_never_show_secrets(tmp_path: Path) -> None:
    state = _state()
    texts = [repr(state), str(state), repr(state.tokens), repr(state.client)]
    texts += [repr(FsOAuthStore(tmp_path / "x.json")), repr(KeyringOAuthStore())]
    for text in texts:
        for secret in (ACCESS, REFRESH, CLIENT_SECRET, "verifier-secret-value"):
            assert secret not in text


def test_empty_state() -> None:
    state = empty_oauth_state("https://x/mcp")
    assert state.server_url == "https://x/mcp" and state.tokens is None and state.client is None


_text = st.text(min_size=1, max_size=40)


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    access=_text,
    refresh=st.none() | _text,
    secret=st.none() | _text,
    expires=st.none() | st.floats(min_value=0, max_value=4e9),
    scope=st.none() | _text,
)
def test_state_json_round_trip(
    access: str, refresh: str | None, secret: str | None, expires: float | None, scope: str | None
) -> None:
    state = OAuthState(
        client=OAuthClientInfo(
            client_id="c", client_secret=SecretStr(secret) if secret is not None else None
        ),
        tokens=StoredTokens(
            access_token=SecretStr(access),
            refresh_token=SecretStr(refresh) if refresh is not None else None,
            expires_at=expires,
            scope=scope,
        ),
    )
    data: Any = json.loads(json.dumps(state_to_json(state)))
    back = state_from_json(data)
    assert back.tokens is not None and back.client is not None
    assert back.tokens.access_token.get_secret_value() == access
    assert (
        back.tokens.refresh_token.get_secret_value() if back.tokens.refresh_token else None
    ) == refresh
    assert (
        back.client.client_secret.get_secret_value() if back.client.client_secret else None
    ) == secret
    assert back.tokens.expires_at == expires and back.tokens.scope == scope


async def test_lock_file_is_private(tmp_path: Path) -> None:
    store = FsOAuthStore(tmp_path / "oauth.json")
    await store.set("k", empty_oauth_state())
    lock = tmp_path / "oauth.json.lock"
    assert stat.S_IMODE(os.stat(lock).st_mode) == 0o600
