"""``/connections`` and ``/oauth/callback``: principals connect the project's local OAuth
server over HTTP, and their agents send it their own tokens (checked on the server side)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request

from glove_core import Glove, Message, ScriptedModel, ToolCall, ToolResultData
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.oauth import Connections, MemoryOAuthStore, credential_key
from glove_mcp.server.connection_flows import FlowStore, SqliteFlows
from glove_mcp.server.connections import check_public_url, connection_routes
from glove_mcp.server.principals import Principal
from glove_mcp.testing import OAuthTestServer, serve_oauth_server

KEYS = {
    "key-alice-0123456789abcdef": "alice",
    "key-bob-0123456789abcdef00": "bob",
    "key-carol-0123456789abcdef": "carol",
}
BASE = "http://127.0.0.1:8000"


def authenticate(request: Request) -> None:
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    if token not in KEYS:
        raise HTTPException(401, "missing or wrong API key")


def principal_of(request: Request) -> Principal:
    return Principal(KEYS[request.headers["authorization"].removeprefix("Bearer ")])


@dataclass
class Setup:
    oauth: OAuthTestServer
    connections: Connections
    store: MemoryOAuthStore
    flows: FlowStore
    app: Starlette

    def client(self, key: str | None = None, app: Starlette | None = None) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        transport = httpx2.ASGITransport(app=app or self.app)
        return httpx2.AsyncClient(transport=transport, base_url=BASE, headers=headers)


def make_app(connections: Connections, flows: FlowStore) -> Starlette:
    return Starlette(
        routes=connection_routes(
            connections, flows, authenticate=authenticate, principal_of=principal_of
        )
    )


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    async with serve_oauth_server() as oauth:
        entry = McpCatalogueEntry(
            id="notes", name="Notes", url=oauth.url, description="Search and read notes."
        )
        store = MemoryOAuthStore()
        connections = Connections([entry], store)
        flows = SqliteFlows(str(tmp_path / "server.db"))
        try:
            yield Setup(oauth, connections, store, flows, make_app(connections, flows))
        finally:
            await flows.aclose()


async def start(client: httpx2.AsyncClient, server_id: str = "notes") -> str:
    response = await client.post(f"/connections/{server_id}")
    assert response.status_code == 200, response.text
    url = response.json()["authorize_url"]
    assert isinstance(url, str)
    return url


async def approve(authorize_url: str) -> str:
    """What the person's browser does at the authorization server (it auto-approves): the
    path and query it is sent back to."""
    async with httpx2.AsyncClient() as browser:
        response = await browser.get(authorize_url)
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["location"])
    return f"{location.path}?{location.query}"


async def connect(setup: Setup, key: str) -> httpx2.Response:
    async with setup.client(key) as client:
        callback = await approve(await start(client))
        return await client.get(callback)


def token_of(store: MemoryOAuthStore, principal: str, url: str) -> Any:
    async def read() -> str:
        state = await store.get(credential_key(principal, url))
        assert state is not None and state.tokens is not None
        return state.tokens.access_token.get_secret_value()

    return read()


def call(name: str, call_id: str, **input: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, input=input)


def results(messages: list[Message]) -> list[ToolResultData]:
    return [r.result for m in messages for r in (m.tool_results or [])]


async def run_agent(setup: Setup, principal: str, script: list[Any]) -> tuple[list[Any], Any]:
    model = ScriptedModel(script)
    adapter = MemoryMcpAdapter(principal, active=(), tokens=setup.connections.tokens(principal))
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    entries = setup.connections.with_connect_hints()
    async with await mount_mcp(glove, adapter=adapter, entries=entries):
        glove.build()
        result = await glove.process_request("go")
    return results(result.messages), model


async def test_two_principals_connect_and_their_agents_send_their_own_tokens(
    setup: Setup,
) -> None:
    async with setup.client("key-alice-0123456789abcdef") as alice:
        listed = (await alice.get("/connections")).json()["connections"]
    assert listed == [
        {
            "id": "notes",
            "name": "Notes",
            "url": setup.oauth.url,
            "state": "needs_login",
            "expires_at": None,
            "scopes": [],
        }
    ]
    done = await connect(setup, "key-alice-0123456789abcdef")
    assert done.status_code == 200
    assert "Connected: Notes" in done.text and "You can close this tab." in done.text
    assert (await connect(setup, "key-bob-0123456789abcdef00")).status_code == 200
    alice_token = await token_of(setup.store, "alice", setup.oauth.url)
    bob_token = await token_of(setup.store, "bob", setup.oauth.url)
    assert alice_token != bob_token
    async with setup.client("key-alice-0123456789abcdef") as alice:
        row = (await alice.get("/connections")).json()["connections"][0]
    assert row["state"] == "connected" and row["expires_at"] is not None
    assert set(row["scopes"]) == {"notes:read", "notes:write"}

    seen = setup.oauth.http.control.seen_tokens
    for principal, token in (("alice", alice_token), ("bob", bob_token)):
        before = len(seen)
        found, _ = await run_agent(
            setup,
            principal,
            [
                [call(FIND_CAPABILITY, "m1", need="search my notes")],
                [call("activate", "s1", id="notes")],
                "Activated.",
                [call("notes__search_pages", "m2", query="welcome")],
                "done",
            ],
        )
        assert [r.status for r in found] == ["success", "success"]
        sent = seen[before:]
        # Every request this agent made carried this principal's token, and only it.
        assert sent and set(sent) == {token}


async def test_an_unconnected_principal_is_told_the_connect_step_and_sends_nothing(
    setup: Setup,
) -> None:
    assert (await connect(setup, "key-alice-0123456789abcdef")).status_code == 200
    seen = setup.oauth.http.control.seen_tokens
    before = len(seen)
    _, model = await run_agent(
        setup,
        "carol",
        [
            [call(FIND_CAPABILITY, "m1", need="notes")],
            [call("activate", "s1", id="notes")],
            "x",
            "y",
        ],
    )
    sub = [r for r in model.requests if r.system != "main"]
    outcome = sub[1].messages[-1].tool_results
    assert outcome is not None
    message = outcome[0].result.message or ""
    assert outcome[0].result.status == "error"
    assert "POST /connections/notes" in message
    assert set(seen[before:]) == {None}  # carol's agent sent no token at all


async def callback(setup: Setup, client: httpx2.AsyncClient, **query: str) -> httpx2.Response:
    return await client.get(f"/oauth/callback?{urlencode(query)}")


async def test_bad_callbacks_each_get_a_page_and_store_nothing(setup: Setup) -> None:
    async with setup.client("key-alice-0123456789abcdef") as alice:
        url = await start(alice)
        state = parse_qs(urlsplit(url).query)["state"][0]
        cases = {
            "no state": await callback(setup, alice, code="x"),
            "unknown state": await callback(setup, alice, code="x", state="forged"),
            "huge": await alice.get("/oauth/callback?state=" + "a" * 10_000),
        }
        for _ in range(200):  # a flood of guesses: each answered, none stored
            assert (await callback(setup, alice, code="c", state="guess")).status_code == 400
        # Another browser (no cookie of this flow) brings the real state: refused, spent.
        async with setup.client() as stranger:
            other = await callback(setup, stranger, code="x", state=state)
        replay = await callback(setup, alice, code="x", state=state)
    assert cases["no state"].status_code == 400 and "no state" in cases["no state"].text
    assert cases["unknown state"].status_code == 400
    assert "unknown or was already used" in cases["unknown state"].text
    assert cases["huge"].status_code == 414
    assert other.status_code == 403 and "another browser" in other.text
    assert replay.status_code == 400
    assert await setup.store.get(credential_key("alice", setup.oauth.url)) is None
    assert setup.oauth.provider.counters.code_exchanges == 0


async def test_denied_consent_wrong_issuer_failed_exchange_and_replay(setup: Setup) -> None:
    async with setup.client("key-alice-0123456789abcdef") as alice:
        setup.oauth.provider.deny = True
        denied = await alice.get(await approve(await start(alice)))
        setup.oauth.provider.deny = False

        path = await approve(await start(alice))
        wrong_iss = await alice.get(path + "&" + urlencode({"iss": "https://evil.example"}))

        path = await approve(await start(alice))
        bad_code = parse_qs(urlsplit(path).query)
        bad_code["code"] = ["not-the-code"]
        failed = await alice.get(
            "/oauth/callback?" + urlencode({k: v[0] for k, v in bad_code.items()})
        )

        path = await approve(await start(alice))
        ok = await alice.get(path)
        replayed = await alice.get(path)
    assert denied.status_code == 400 and "You denied access." in denied.text
    assert wrong_iss.status_code == 400 and "issuer" in wrong_iss.text
    assert failed.status_code == 400 and "refused the code" in failed.text
    assert ok.status_code == 200
    assert replayed.status_code == 400 and "already used" in replayed.text
    assert await setup.store.get(credential_key("alice", setup.oauth.url)) is not None
    # The bad code and the good one reached the token endpoint; the wrong issuer never did.
    assert setup.oauth.provider.counters.code_exchanges == 2


async def test_expired_flow_is_refused(tmp_path: Path) -> None:
    async with serve_oauth_server() as oauth:
        entry = McpCatalogueEntry(id="notes", name="Notes", url=oauth.url, description="n")
        store = MemoryOAuthStore()
        connections = Connections([entry], store, flow_ttl=0.001)
        flows = SqliteFlows(str(tmp_path / "s.db"))
        app = make_app(connections, flows)
        transport = httpx2.ASGITransport(app=app)
        headers = {"Authorization": "Bearer key-alice-0123456789abcdef"}
        async with httpx2.AsyncClient(transport=transport, base_url=BASE, headers=headers) as alice:
            path = await approve(await start(alice))
            expired = await alice.get(path)
        await flows.aclose()
    assert expired.status_code == 400 and "expired" in expired.text
    assert await store.get(credential_key("alice", oauth.url)) is None


async def test_disconnect_revokes_and_forgets(setup: Setup) -> None:
    assert (await connect(setup, "key-alice-0123456789abcdef")).status_code == 200
    assert (await connect(setup, "key-bob-0123456789abcdef00")).status_code == 200
    token = await token_of(setup.store, "alice", setup.oauth.url)
    async with setup.client("key-alice-0123456789abcdef") as alice:
        gone = await alice.delete("/connections/notes")
        row = (await alice.get("/connections")).json()["connections"][0]
        again = await alice.delete("/connections/notes")
    assert gone.json() == {"id": "notes", "revocation": "revoked"}
    assert row["state"] == "needs_login"
    assert again.json()["revocation"] == "no_tokens"
    assert await setup.oauth.provider.load_access_token(token) is None
    assert await token_of(setup.store, "bob", setup.oauth.url)  # bob keeps his


async def test_routes_need_a_key_and_a_known_server(setup: Setup) -> None:
    async with setup.client() as anonymous, setup.client("key-alice-0123456789abcdef") as alice:
        assert (await anonymous.get("/connections")).status_code == 401
        assert (await anonymous.post("/connections/notes")).status_code == 401
        assert (await alice.post("/connections/ghost")).status_code == 404


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://glove.example.com/", True),
        ("http://127.0.0.1:8000", True),
        ("http://localhost:8000", True),
        ("http://glove.example.com", False),
        ("ftp://x", False),
        ("https://glove.example.com/?a=1", False),
    ],
)
def test_public_url_check(url: str, ok: bool) -> None:
    check: Callable[[], object] = lambda: check_public_url(url)  # noqa: E731
    if ok:
        assert check() == url.rstrip("/")
    else:
        with pytest.raises(ValueError, match="public_url"):
            check()


async def test_a_flow_started_on_one_instance_completes_on_another(
    postgres_url: str,
) -> None:
    from glove_mcp.oauth.postgres_store import PostgresOAuthStore
    from glove_mcp.server import HeadlessServer

    def refuse(session_id: str, store: Any, stack: Any) -> Glove:
        raise AssertionError("no sessions here")

    async with serve_oauth_server() as oauth:
        entry = McpCatalogueEntry(id="notes", name="Notes", url=oauth.url, description="n")
        instances = []
        for _ in range(2):
            connections = Connections([entry], MemoryOAuthStore())  # store set below
            server = HeadlessServer(
                None,
                "key-alice-0123456789abcdef",
                refuse,
                database_url=postgres_url,
                public_url="http://127.0.0.1:8000",
                connections=connections,
            )
            await server.open()
            assert server.database is not None
            connections.store = PostgresOAuthStore(server.database)
            instances.append(server)
        first, second = instances
        # One browser (one cookie jar), two instances behind one address.
        mounts = {
            "http://127.0.0.1:8001": httpx2.ASGITransport(app=first.app),
            "http://127.0.0.1:8002": httpx2.ASGITransport(app=second.app),
        }
        try:
            async with httpx2.AsyncClient(
                mounts=mounts, headers={"Authorization": "Bearer key-alice-0123456789abcdef"}
            ) as browser:
                started = await browser.post("http://127.0.0.1:8001/connections/notes")
                url = started.json()["authorize_url"]
                assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A8000%2Foauth%2Fcallback" in url
                callback = await approve(url)
                done = await browser.get(f"http://127.0.0.1:8002{callback}")
                listed = await browser.get("http://127.0.0.1:8001/connections")
                again = await browser.get(f"http://127.0.0.1:8001{callback}")
        finally:
            for server in instances:
                await server.aclose()
    assert done.status_code == 200 and "Connected: Notes" in done.text
    assert listed.json()["connections"][0]["state"] == "connected"  # seen by the first
    assert again.status_code == 400  # spent on the second: not usable on the first
    assert oauth.provider.counters.code_exchanges == 1


def test_serve_refuses_a_plain_http_public_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.glove_mcp.cli._commands import in_process

    ran = in_process(
        "serve",
        "--public-url",
        "http://glove.example.com",
        home=tmp_path,
        env={"GLOVE_API_KEY": "k" * 32},
        capsys=capsys,
    )
    assert ran.status == 2
    assert "--public-url" in ran.err and "https://" in ran.err


async def test_no_secret_reaches_a_log_a_repr_or_a_page(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from glove_mcp.oauth.web_flow import WebAuthorization

    caplog.set_level(logging.DEBUG)
    async with setup.client("key-alice-0123456789abcdef") as alice:
        url = await start(alice)
        callback_path = await approve(url)
        done = await alice.get(callback_path)
        listed = await alice.get("/connections")
    query = parse_qs(urlsplit(callback_path).query)
    state = await setup.store.get(credential_key("alice", setup.oauth.url))
    assert state is not None and state.tokens is not None
    secrets = [
        query["code"][0],
        query["state"][0],
        state.tokens.access_token.get_secret_value(),
    ]
    # Our loggers only: the test's own HTTP clients (the "browser") log the URLs they fetch.
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("glove")]
    started = WebAuthorization("https://a/authorize?x", "st", {"verifier": "v"})
    shown = "\n".join(
        [*ours, done.text, listed.text, repr(state), repr(setup.connections), repr(started)]
    )
    for secret in secrets:
        assert secret not in shown
    assert "'v'" not in shown and "authorize?x" not in shown


async def test_the_server_names_each_connection_by_the_principal_its_key_belongs_to(
    tmp_path: Path,
) -> None:
    """``HeadlessServer`` with keys of two principals and no ``principal_of``: the connection
    routes act for the principal the server's own authentication named, the callback needs
    no key, and the stored token is the connecting principal's only."""
    import hashlib

    from glove_mcp.server import HeadlessServer
    from glove_mcp.server.principals import ApiKeys
    from tests.glove_mcp.server._harness import simple_factory

    keys = ApiKeys(
        {hashlib.sha256(key.encode()).hexdigest(): Principal(name) for key, name in KEYS.items()}
    )
    async with serve_oauth_server() as oauth:
        entry = McpCatalogueEntry(
            id="notes", name="Notes", url=oauth.url, description="Search and read notes."
        )
        store = MemoryOAuthStore()
        server = HeadlessServer(
            str(tmp_path / "server.db"),
            None,
            simple_factory(),
            authenticator=keys,
            connections=Connections([entry], store),
        )
        await server.open()
        try:
            transport = httpx2.ASGITransport(app=server.app)

            def client(key: str | None) -> httpx2.AsyncClient:
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                return httpx2.AsyncClient(transport=transport, base_url=BASE, headers=headers)

            alice_key, bob_key = list(KEYS)[:2]
            async with client(alice_key) as alice, client(bob_key) as bob, client(None) as anon:
                assert (await anon.get("/connections")).status_code == 401
                callback = await approve(await start(alice))
                # The callback carries no key (the state is the credential) but the browser's
                # cookie: the same client, its authorization header dropped.
                done = await alice.get(callback, headers={"Authorization": ""})
                assert done.status_code == 200, done.text
                assert "Connected: Notes" in done.text
                states = {
                    who: (await c.get("/connections")).json()["connections"][0]["state"]
                    for who, c in (("alice", alice), ("bob", bob))
                }
                assert states == {"alice": "connected", "bob": "needs_login"}
            assert await token_of(store, "alice", oauth.url)
            assert await store.get(credential_key("bob", oauth.url)) is None
            assert await store.get(credential_key("default", oauth.url)) is None
        finally:
            await server.aclose()
