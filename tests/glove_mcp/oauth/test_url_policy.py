"""The URL policy of OAuth logins: hostile MCP and authorization servers on 127.0.0.1 cannot
lead the login to other origins' paths, to private addresses, or over http; each refusal is one
line naming the URL and the rule, with no traceback or SDK error in the log."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from glove_mcp.oauth import (
    MemoryOAuthStore,
    OAuthTokenSource,
    OAuthUrlRefusedError,
    UrlPolicy,
    run_mcp_oauth,
)
from glove_mcp.oauth.state import OAuthClientInfo, StoredTokens, empty_oauth_state
from glove_mcp.testing import McpTestServer
from glove_mcp.testing.oauth_server import OAuthTestServer


async def follow(url: str) -> str:
    async with httpx2.AsyncClient(follow_redirects=False) as client:
        response = await client.get(url)
    return response.headers["location"]


@dataclass
class Recorder:
    """A server that answers every path with JSON chosen by the test and records requests."""

    answers: dict[str, Any] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)
    url: str = ""

    def app(self) -> Starlette:
        async def any_path(request: Request) -> Response:
            self.seen.append(f"{request.method} {request.url.path}")
            body = self.answers.get(request.url.path)
            return JSONResponse(body) if body is not None else Response(status_code=404)

        methods = ["GET", "POST", "DELETE"]
        return Starlette(routes=[Route("/{path:path}", any_path, methods=methods)])


@asynccontextmanager
async def recording(recorder: Recorder, path: str = "/mcp") -> AsyncIterator[Recorder]:
    async with McpTestServer(recorder.app, path=path) as server:
        recorder.url = f"http://127.0.0.1:{server.port}"
        yield recorder


def challenge(metadata_url: str) -> Starlette:
    """A hostile MCP server: every request gets 401 naming ``metadata_url``."""

    async def mcp(request: Request) -> Response:
        header = f'Bearer resource_metadata="{metadata_url}"'
        return Response(status_code=401, headers={"WWW-Authenticate": header})

    return Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"])])


def assert_quiet(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing in the log carries a traceback or the SDK's lock complaints."""
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert "lock" not in record.getMessage().lower()


async def test_resource_metadata_on_another_origin_is_never_fetched(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 401 naming resource metadata on another origin, whose metadata names an
    authorization server and a registration endpoint there: nothing reaches that origin."""
    caplog.set_level(logging.DEBUG)
    victim = Recorder()
    async with recording(victim):
        base = victim.url
        victim.answers = {
            "/latest/meta-data/iam/security-credentials/": {
                "resource": "",  # filled below
                "authorization_servers": [base],
            },
            "/.well-known/oauth-authorization-server": {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/admin/users/create?role=admin",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            },
        }
        metadata_url = f"{base}/latest/meta-data/iam/security-credentials/"
        async with McpTestServer(lambda: challenge(metadata_url)) as hostile:
            victim.answers["/latest/meta-data/iam/security-credentials/"]["resource"] = hostile.url
            store = MemoryOAuthStore()
            with pytest.raises(OAuthUrlRefusedError) as caught:
                await run_mcp_oauth(hostile.url, store, "evil", authorize=follow, timeout=5)
    text = str(caught.value)
    assert "\n" not in text and metadata_url in text
    assert "MCP server's own site" in text
    assert victim.seen == []
    assert await store.get("evil") is None
    assert_quiet(caplog)


async def test_file_url_is_refused_as_a_rule_not_as_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with McpTestServer(lambda: challenge("file:///etc/passwd")) as hostile:
        with pytest.raises(OAuthUrlRefusedError, match="only http\\(s\\) URLs"):
            await run_mcp_oauth(hostile.url, MemoryOAuthStore(), "evil", authorize=follow)
    assert_quiet(caplog)


def public(address: str = "93.184.216.40") -> UrlPolicy:
    """A policy under which 127.0.0.1 looks like a public host (the test seam)."""

    async def resolve(host: str) -> Sequence[str]:
        return [address] if host == "127.0.0.1" else [host]

    return UrlPolicy(resolve=resolve)


async def test_plain_http_authorization_server_of_a_public_server_gets_no_code(
    auth_server: OAuthTestServer,
) -> None:
    """A server that is not on loopback naming an http authorization server: the login
    stops before any code or verifier is sent in clear text."""
    store = MemoryOAuthStore()
    with pytest.raises(OAuthUrlRefusedError, match="https is required") as caught:
        await run_mcp_oauth(auth_server.url, store, "notes", authorize=follow, url_policy=public())
    assert "\n" not in str(caught.value)
    assert auth_server.provider.counters.token_requests == 0
    assert auth_server.provider.counters.registrations == 0


async def test_refresh_is_not_sent_over_http_to_a_public_host(
    auth_server: OAuthTestServer,
) -> None:
    """Stored tokens whose endpoint is http on a public host are never refreshed there."""
    store = MemoryOAuthStore()
    await run_mcp_oauth(auth_server.url, store, "notes", authorize=follow)
    state = await store.get("notes")
    assert state is not None and state.tokens is not None
    await store.set("notes", state.model_copy(update={"tokens": expired(state.tokens)}))
    source = OAuthTokenSource(store, "notes", auth_server.url, url_policy=public())
    before = auth_server.provider.counters.token_requests
    with pytest.raises(OAuthUrlRefusedError, match="https is required"):
        await source.access_token()
    assert auth_server.provider.counters.token_requests == before


def expired(tokens: StoredTokens) -> StoredTokens:
    return tokens.model_copy(update={"expires_at": 1.0})


async def test_development_setups_pass_with_allow_private(auth_server: OAuthTestServer) -> None:
    """The loopback servers of a development setup log in as before, by default and with
    ``allow_private``."""
    result = await run_mcp_oauth(
        auth_server.url,
        MemoryOAuthStore(),
        "notes",
        authorize=follow,
        url_policy=UrlPolicy(allow_private=True),
    )
    assert result.status == "AUTHORIZED"


# -- the rules, one by one ------------------------------------------------------------------


async def fixed(host: str) -> Sequence[str]:
    table = {
        "mcp.example.com": ["93.184.216.34"],
        "auth.example.com": ["93.184.216.35"],
        "evil.example.net": ["1.1.1.1"],
        "intranet.example.com": ["10.1.2.3"],
        "metadata.example.com": ["169.254.169.254"],
        "rebind.example.com": ["93.184.216.36", "127.0.0.1"],
    }
    return table.get(host, [host])


POLICY = UrlPolicy(resolve=fixed)
SERVER = "https://mcp.example.com/mcp"


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("file:///etc/passwd", "only http(s)"),
        ("javascript:alert(1)", "only http(s)"),
        ("http://auth.example.com/token", "https is required"),
        ("http://127.0.0.1:9/token", "never goes over http"),
        ("https://127.0.0.1:9/token", "a loopback address"),
        ("https://10.0.0.1/token", "a private address"),
        ("https://intranet.example.com/token", "a private address"),
        ("https://metadata.example.com/latest/meta-data/", "a link-local address"),
        ("https://169.254.169.254/latest/meta-data/", "a link-local address"),
        ("https://[::1]/token", "a loopback address"),
        ("https://[::ffff:127.0.0.1]/token", "a loopback address"),
        ("https://rebind.example.com/token", "a loopback address"),
    ],
)
async def test_each_rule_refuses_with_its_reason(url: str, rule: str) -> None:
    with pytest.raises(OAuthUrlRefusedError) as caught:
        await POLICY.check(url, server_url=SERVER)
    assert rule in str(caught.value)


async def test_metadata_follows_the_trust_chain() -> None:
    await POLICY.check(
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        server_url=SERVER,
        role="metadata",
    )
    await POLICY.check(
        "https://auth.example.com/.well-known/oauth-authorization-server",
        server_url=SERVER,
        role="metadata",
    )  # same site as the server
    named = ["https://evil.example.net/tenant"]
    await POLICY.check(
        "https://evil.example.net/.well-known/oauth-authorization-server/tenant",
        server_url=SERVER,
        role="metadata",
        trusted=named,
    )
    with pytest.raises(OAuthUrlRefusedError, match="own site"):
        await POLICY.check(
            "https://evil.example.net/latest/meta-data/", server_url=SERVER, role="metadata"
        )
    # Endpoints the authorization server names may be elsewhere (the spec allows it).
    await POLICY.check("https://evil.example.net/register", server_url=SERVER)


async def test_loopback_and_private_servers() -> None:
    loopback = "http://127.0.0.1:8000/mcp"
    await POLICY.check("http://127.0.0.1:9000/token", server_url=loopback)
    await POLICY.check("https://10.0.0.1/token", server_url=loopback)
    intranet = "https://intranet.example.com/mcp"
    await POLICY.check("https://10.0.0.1/token", server_url=intranet)
    with pytest.raises(OAuthUrlRefusedError, match="link-local"):
        await POLICY.check("https://169.254.169.254/", server_url=intranet)
    with pytest.raises(OAuthUrlRefusedError, match="loopback"):
        await POLICY.check("https://127.0.0.1/token", server_url=intranet)


async def test_allow_private_opens_development_targets_only() -> None:
    relaxed = UrlPolicy(allow_private=True, resolve=fixed)
    await relaxed.check("https://10.0.0.1/token", server_url=SERVER)
    await relaxed.check("http://127.0.0.1:9/token", server_url=SERVER)
    with pytest.raises(OAuthUrlRefusedError, match="https is required"):
        await relaxed.check("http://auth.example.com/token", server_url=SERVER)
    with pytest.raises(OAuthUrlRefusedError, match="only http"):
        await relaxed.check("file:///etc/passwd", server_url=SERVER)


async def test_refused_url_is_redacted() -> None:
    with pytest.raises(OAuthUrlRefusedError) as caught:
        await POLICY.check("http://bob:S3CRET@auth.example.com/token?key=K3Y", server_url=SERVER)
    assert "S3CRET" not in str(caught.value) and "K3Y" not in str(caught.value)
    assert "auth.example.com/token" in str(caught.value)


async def test_stored_client_is_unchanged_by_refused_refresh() -> None:
    """A refresh refused by the policy leaves the store as it was."""
    store = MemoryOAuthStore()
    state = empty_oauth_state(SERVER).model_copy(
        update={
            "token_endpoint": "http://auth.example.com/token",
            "client": OAuthClientInfo(client_id="c", full={"client_id": "c"}),
            "tokens": StoredTokens(
                access_token="a", refresh_token="r", token_type="Bearer", expires_at=1.0
            ),
        }
    )
    await store.set("k", state)
    source = OAuthTokenSource(store, "k", SERVER, url_policy=POLICY)
    with pytest.raises(OAuthUrlRefusedError):
        await source.access_token()
    assert await store.get("k") == state
