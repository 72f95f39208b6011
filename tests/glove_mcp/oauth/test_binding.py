"""A credential goes only to the resource it was issued for: ``oauth.json`` holds a login
for ``notes`` at server A; the catalogue's ``notes`` now names server B, which records every
Authorization header it gets. ``chat``, ``status``, ``serve`` and every store send B nothing,
never refresh for it, and say the server needs a new login."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from glove_mcp import bearer, connect_mcp
from glove_mcp.adapter import SqliteMcpAdapter
from glove_mcp.errors import McpAuthExpiredError
from glove_mcp.oauth import (
    BoundLogin,
    FsOAuthStore,
    KeyringOAuthStore,
    OAuthStore,
    credential_key,
    run_mcp_oauth,
)
from glove_mcp.testing import McpTestServer, OAuthTestServer, ServerControl, serve_oauth_server
from tests.glove_mcp.cli._commands import run_cli, write_catalogue
from tests.glove_mcp.oauth.test_stores import MemoryKeyring
from tests.glove_mcp.server._harness import AUTH, serve_process, sse_events


async def approve(url: str) -> str:
    """The person approves (the local authorization server auto-approves)."""
    async with httpx2.AsyncClient() as browser:
        response = await browser.get(url)
    return str(response.headers["location"])


@dataclass
class Moved:
    a: OAuthTestServer
    b: McpTestServer

    @property
    def seen_by_b(self) -> list[str | None]:
        return self.b.control.seen_tokens


@pytest.fixture
async def moved() -> AsyncIterator[Moved]:
    async with serve_oauth_server() as a, McpTestServer("notes", control=ServerControl()) as b:
        yield Moved(a, b)


async def log_in_under_the_id(store: OAuthStore, a: OAuthTestServer) -> None:
    """What an older `glove-mcp auth notes` left: a login keyed by the catalogue id that
    records the URL it was issued for."""
    await run_mcp_oauth(a.url, store, "notes", authorize=approve, verify=None)
    state = await store.get("notes")
    assert state is not None and state.server_url == a.url and state.tokens is not None


async def test_fs_store_chat_status_and_serve_send_no_token_to_another_url(
    moved: Moved, tmp_path: Path
) -> None:
    home = tmp_path
    await log_in_under_the_id(FsOAuthStore(home / "oauth.json"), moved.a)
    catalogue = write_catalogue(home / "servers.toml", notes=moved.b.url)

    # -- status ----------------------------------------------------------------------------
    status = await asyncio.to_thread(run_cli, "status", "--catalogue", str(catalogue), home=home)
    line = next(x for x in status.out.splitlines() if x.startswith("notes"))
    assert "not logged in" in line and f"issued for {moved.a.url}" in line, status.out

    # -- chat (notes active from the start; the agent calls one of its tools) --------------
    script = home / "script.json"
    calls = [{"name": "notes__search_pages", "input": {"query": "x"}}]
    script.write_text(json.dumps([{"tool_calls": calls}, "done"]))
    await SqliteMcpAdapter(home / "chat.db", "s1").activate("notes")
    chat = await asyncio.to_thread(
        run_cli,
        *(
            "chat",
            "--session",
            "s1",
            "--new",
            "--db",
            str(home / "chat.db"),
            "--script",
            str(script),
        ),
        *("--catalogue", str(catalogue)),
        home=home,
        stdin=b"search my notes\n",
    )
    assert chat.status == 0, chat.err
    assert "notes needs a new login" in chat.out and "glove-mcp auth notes" in chat.out
    assert moved.seen_by_b and set(moved.seen_by_b) == {None}

    # -- serve (GET /connections says so; the agent's calls carry no token) ----------------
    before = len(moved.seen_by_b)
    catalogue_text = catalogue.read_text(encoding="utf-8")
    await SqliteMcpAdapter(home / "server.db", "s2").activate("notes")
    async with (
        serve_process(
            home, script=[{"tool_calls": calls}, "done"], catalogue_text=catalogue_text
        ) as served,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        listed = (await http.get(f"{served.url}/connections", headers=AUTH)).json()
        created = await http.post(f"{served.url}/sessions", headers=AUTH, json={"id": "s2"})
        assert created.status_code == 201
        reply = await http.post(
            f"{served.url}/sessions/s2/messages", headers=AUTH, json={"text": "go"}
        )
        events = [name for name, _ in sse_events(reply.text)]
    row = listed["connections"][0]
    assert row["state"] == "needs_login" and moved.a.url in row["detail"]
    assert "final" in events
    assert len(moved.seen_by_b) > before and set(moved.seen_by_b[before:]) == {None}
    assert moved.a.provider.counters.refresh_requests == 0


async def keyring_store(tmp_path: Path, url: str | None) -> OAuthStore:
    return KeyringOAuthStore(service="glove-test", backend=MemoryKeyring())


async def fs_store(tmp_path: Path, url: str | None) -> OAuthStore:
    return FsOAuthStore(tmp_path / "oauth.json")


async def postgres_store(tmp_path: Path, url: str | None) -> OAuthStore:
    # Imported here: without the postgres extra only this case skips (postgres_url says why).
    from glove_core.postgres import PostgresDatabase
    from glove_mcp.oauth.postgres_store import PostgresOAuthStore

    assert url is not None
    database = PostgresDatabase(url, min_size=1, max_size=2)
    await database.open()
    return PostgresOAuthStore(database)


@pytest.mark.parametrize("kind", ["file", "keyring", "postgres"])
async def test_every_store_binds_credentials_to_their_resource(
    kind: str, moved: Moved, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if kind == "postgres" else None
    make: Any = {"file": fs_store, "keyring": keyring_store, "postgres": postgres_store}[kind]
    store = await make(tmp_path, url)
    await log_in_under_the_id(store, moved.a)
    elsewhere = BoundLogin(store, "default", "notes", moved.b.url, "glove-mcp auth notes")
    assert await elsewhere.access_token() is None
    check = await elsewhere.check()
    assert check.state == "needs_login" and check.stale and moved.a.url in (check.reason or "")

    # B answers 401 to everything: the auth asks again with force_refresh; still nothing,
    # and nothing is refreshed at A.
    moved.b.control.answer_401 = True
    with pytest.raises(McpAuthExpiredError):
        async with await connect_mcp("notes", moved.b.url, auth=bearer(elsewhere)) as conn:
            await conn.list_tools()
    assert set(moved.seen_by_b) == {None}
    assert moved.a.provider.counters.refresh_requests == 0
    assert await store.get("notes") is not None  # not migrated to B, not deleted

    # Another principal never gets default's login, even for A's URL.
    assert await BoundLogin(store, "bob", "notes", moved.a.url, "x").access_token() is None

    # At its own URL the login migrates to the resource-bound key and works.
    home = BoundLogin(store, "default", "notes", moved.a.url, "glove-mcp auth notes")
    token = await home.access_token()
    assert token is not None
    assert await store.get("notes") is None
    assert await store.get(credential_key("default", moved.a.url)) is not None
    async with await connect_mcp("notes", moved.a.url, auth=bearer(home)) as conn:
        assert await conn.list_tools()
    assert moved.a.http.control.seen_tokens[-1] == token


async def test_a_login_without_a_url_is_never_guessed(moved: Moved, tmp_path: Path) -> None:
    store = FsOAuthStore(tmp_path / "oauth.json")
    await log_in_under_the_id(store, moved.a)
    state = await store.get("notes")
    assert state is not None
    await store.set("notes", state.model_copy(update={"server_url": None}))
    login = BoundLogin(store, "default", "notes", moved.a.url, "glove-mcp auth notes")
    assert await login.access_token() is None
    check = await login.check()
    assert check.stale and "records no server URL" in (check.reason or "")


async def test_a_token_source_refuses_tokens_issued_for_another_url(moved: Moved) -> None:
    from glove_mcp.errors import OAuthLoginRequiredError
    from glove_mcp.oauth import MemoryOAuthStore, OAuthTokenSource

    store = MemoryOAuthStore()
    await log_in_under_the_id(store, moved.a)
    source = OAuthTokenSource(store, "notes", moved.b.url, login_command="glove-mcp auth notes")
    for fresh in (False, True):
        with pytest.raises(OAuthLoginRequiredError, match="issued for"):
            await source.access_token(force_refresh=fresh)
    assert moved.a.provider.counters.refresh_requests == 0
    assert await OAuthTokenSource(store, "notes", moved.a.url).access_token()
