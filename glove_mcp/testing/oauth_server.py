"""A real OAuth 2.1 authorization server, in memory, in front of a local MCP server.

``LocalAuthProvider`` implements the SDK's ``OAuthAuthorizationServerProvider``; the SDK's
handlers do the protocol checks (PKCE S256, redirect URI, code expiry, grant types, client
authentication). Served by ``serve_oauth_server`` with a notes server (or any ``MCPServer``
factory) on one loopback origin::

    /mcp                                        the MCP server (bearer token required)
    /.well-known/oauth-protected-resource/mcp   RFC 9728 protected resource metadata
    /.well-known/oauth-authorization-server     RFC 8414 authorization server metadata
    /register /authorize /token /revoke         RFC 7591, authorize, token, RFC 7009
                                                (or, with ``client_metadata_documents``,
                                                client ids that are the HTTPS URL of a Client
                                                ID Metadata Document, fetched on first use)
    /consent                                    a consent page when auto-approve is off

Switches and counters on the provider let tests deny consent, shorten token lifetimes, revoke
tokens and count token requests. Tokens here are random test values, but they are still never
logged.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from glove_mcp.testing.harness import McpTestServer
from glove_mcp.testing.servers import build_notes_server

__all__ = [
    "LocalAuthProvider",
    "OAuthServerCounters",
    "OAuthTestServer",
    "serve_oauth_server",
]

DEFAULT_SCOPES = ("notes:read", "notes:write")
"""Scopes the local authorization server knows."""


@dataclass
class OAuthServerCounters:
    """How many requests of each kind the authorization server handled.

    Attributes:
        registrations: dynamic client registrations.
        authorizations: ``/authorize`` requests that reached the provider.
        token_requests: ``/token`` requests (any grant) that passed client authentication.
        code_exchanges: authorization-code grants.
        refresh_requests: refresh-token grants, including rejected ones.
        refresh_rejected: refresh-token grants refused (unknown, revoked or rotated away).
        revocations: tokens revoked through ``/revoke`` or ``revoke_all``.
        metadata_documents: Client ID Metadata Documents fetched (and accepted).
        rejected_documents: documents fetched and refused (wrong ``client_id``, no redirect
            URIs, a client secret method, not JSON).
    """

    registrations: int = 0
    authorizations: int = 0
    token_requests: int = 0
    code_exchanges: int = 0
    refresh_requests: int = 0
    refresh_rejected: int = 0
    revocations: int = 0
    metadata_documents: int = 0
    rejected_documents: int = 0


@dataclass
class _Pending:
    client: OAuthClientInformationFull
    params: AuthorizationParams


@dataclass
class LocalAuthProvider(
    OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]
):
    """An in-memory authorization server provider.

    Attributes:
        resource_url: the MCP endpoint tokens are issued for (RFC 8707); set by the server.
        access_token_ttl: access-token lifetime in seconds (change it at any time).
        refresh_token_ttl: refresh-token lifetime in seconds, ``None`` for no expiry.
        auto_approve: approve every authorization at once; otherwise ``/authorize`` redirects
            to the ``/consent`` page.
        deny: answer every authorization with ``error=access_denied``.
        refuse_registration: answer dynamic client registration with
            ``invalid_client_metadata``.
        refuse_code_grant: answer the authorization-code exchange with
            ``unsupported_grant_type``.
        advertised_issuer: publish this issuer in the authorization server metadata instead
            of the real one (a misconfigured or impostor server).
        on_token_request: awaited at the start of every token grant with the grant type
            (``"authorization_code"`` or ``"refresh_token"``) — e.g. to hold a refresh.
        client_metadata_documents: advertise ``client_id_metadata_document_supported`` and
            accept a client id that is an HTTPS URL: its document is fetched (once) and must
            name that URL as ``client_id``, list ``redirect_uris`` and use no client secret.
        fetch_document: how a document is fetched (a URL in, the parsed JSON out); an HTTPS
            ``GET`` by default. Tests pass documents "hosted" elsewhere this way.
        counters: request counters.
    """

    resource_url: str = ""
    issuer_url: str = ""
    access_token_ttl: int = 3600
    refresh_token_ttl: int | None = None
    auto_approve: bool = True
    deny: bool = False
    refuse_registration: bool = False
    refuse_code_grant: bool = False
    advertised_issuer: str | None = None
    on_token_request: Callable[[str], Awaitable[None]] | None = None
    client_metadata_documents: bool = False
    fetch_document: Callable[[str], Awaitable[Any]] | None = None
    counters: OAuthServerCounters = field(default_factory=OAuthServerCounters)
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict, repr=False)
    _codes: dict[str, AuthorizationCode] = field(default_factory=dict, repr=False)
    _access: dict[str, AccessToken] = field(default_factory=dict, repr=False)
    _refresh: dict[str, RefreshToken] = field(default_factory=dict, repr=False)
    _pair: dict[str, str] = field(default_factory=dict, repr=False)  # access <-> refresh
    _pending: dict[str, _Pending] = field(default_factory=dict, repr=False)

    # -- switches and helpers for tests ---------------------------------------------------

    def add_client(
        self,
        client_id: str,
        client_secret: str | None,
        redirect_uris: list[str],
        token_endpoint_auth_method: str = "client_secret_basic",
        scope: str = " ".join(DEFAULT_SCOPES),
    ) -> OAuthClientInformationFull:
        """Pre-register a client (no DCR), e.g. a confidential one with a secret."""
        client = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=[AnyUrl(u) for u in redirect_uris],
            token_endpoint_auth_method=token_endpoint_auth_method,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=scope,
            client_id_issued_at=int(time.time()),
        )
        self.clients[client_id] = client
        return client

    def expire_access_tokens(self) -> int:
        """Make every issued access token expired (as if its lifetime had passed)."""
        past = int(time.time()) - 1
        for token in self._access.values():
            token.expires_at = past
        return len(self._access)

    def revoke_all(self) -> int:
        """Revoke every access and refresh token (e.g. the user removed the app)."""
        count = len(self._access) + len(self._refresh)
        self.counters.revocations += count
        self._access.clear()
        self._refresh.clear()
        self._pair.clear()
        return count

    def is_refresh_token_active(self, token: str) -> bool:
        """Whether a refresh token would still be accepted."""
        return token in self._refresh

    @property
    def active_refresh_tokens(self) -> int:
        """How many refresh tokens are currently valid."""
        return len(self._refresh)

    # -- OAuthAuthorizationServerProvider -------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """The registered client, the client a metadata document describes, or None."""
        known = self.clients.get(client_id)
        if known is not None or not self.client_metadata_documents:
            return known
        if not client_id.startswith("https://"):
            return None
        fetch = self.fetch_document or _fetch_document
        try:
            document = await fetch(client_id)
        except (OSError, ValueError, httpx2.HTTPError):
            self.counters.rejected_documents += 1
            return None
        client = _client_from_document(client_id, document)
        if client is None:
            self.counters.rejected_documents += 1
            return None
        self.counters.metadata_documents += 1
        self.clients[client_id] = client
        return client

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Store a dynamically registered client."""
        if self.refuse_registration:
            raise RegistrationError("invalid_client_metadata", "registration is closed")
        self.counters.registrations += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        """Approve (auto), deny, or send the browser to the consent page."""
        self.counters.authorizations += 1
        if params.resource is not None and params.resource.rstrip("/") != self.resource_url:
            raise AuthorizeError("invalid_target", f"unknown resource {params.resource}")
        if self.deny:
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="access_denied",
                error_description="The user denied the request",
                state=params.state,
            )
        if not self.auto_approve:
            request_id = secrets.token_urlsafe(16)
            self._pending[request_id] = _Pending(client, params)
            return f"{self.issuer_url}/consent?request={request_id}"
        return self._issue_code(client, params)

    def _issue_code(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        self._codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or (client.scope or "").split(),
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="test-user",
        )
        # No RFC 9207 ``iss``: the metadata does not advertise it, so clients don't need it.
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    def decide(self, request_id: str, approve: bool) -> str:
        """Finish a consent-page request; returns the redirect URL for the browser."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            raise KeyError(f"no pending authorization {request_id!r}")
        if approve:
            return self._issue_code(pending.client, pending.params)
        return construct_redirect_uri(
            str(pending.params.redirect_uri), error="access_denied", state=pending.params.state
        )

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        """Look up a code (one token request each)."""
        self.counters.token_requests += 1
        self.counters.code_exchanges += 1
        if self.on_token_request is not None:
            await self.on_token_request("authorization_code")
        return self._codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        """Spend the code; issue an access and a refresh token."""
        self._codes.pop(authorization_code.code, None)
        if self.refuse_code_grant:
            raise TokenError("unsupported_grant_type", "this server issues no tokens for codes")
        return self._issue_tokens(
            client.client_id,
            authorization_code.scopes,
            authorization_code.resource,
            authorization_code.subject,
        )

    def _issue_tokens(
        self, client_id: str, scopes: list[str], resource: str | None, subject: str | None
    ) -> OAuthToken:
        now = int(time.time())
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        self._access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + self.access_token_ttl,
            resource=resource,
            subject=subject,
        )
        self._refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=now + self.refresh_token_ttl if self.refresh_token_ttl else None,
            resource=resource,
            subject=subject,
        )
        self._pair[access], self._pair[refresh] = refresh, access
        return OAuthToken(
            access_token=access,
            refresh_token=refresh,
            expires_in=self.access_token_ttl,
            scope=" ".join(scopes),
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        """Look up a refresh token (one token request each)."""
        self.counters.token_requests += 1
        self.counters.refresh_requests += 1
        if self.on_token_request is not None:
            await self.on_token_request("refresh_token")
        token = self._refresh.get(refresh_token)
        if token is None:
            self.counters.refresh_rejected += 1
        return token

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        """Rotate: revoke the used refresh token (and its access token), issue a new pair."""
        self._drop(refresh_token.token)
        return self._issue_tokens(
            client.client_id, scopes, refresh_token.resource, refresh_token.subject
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        """Verify a bearer token (expiry is checked by the SDK's middleware)."""
        return self._access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """Revoke a token and its partner."""
        self.counters.revocations += 1
        self._drop(token.token)

    def _drop(self, token: str) -> None:
        partner = self._pair.pop(token, None)
        self._access.pop(token, None)
        self._refresh.pop(token, None)
        if partner is not None:
            self._pair.pop(partner, None)
            self._access.pop(partner, None)
            self._refresh.pop(partner, None)


_CONSENT_PAGE = """<!doctype html><html><body><h1>Allow access?</h1>
<form method="post" action="/consent"><input type="hidden" name="request" value="{request}">
<button name="decision" value="approve">Allow</button>
<button name="decision" value="deny">Deny</button></form></body></html>"""


async def _fetch_document(url: str) -> Any:
    async with httpx2.AsyncClient(timeout=10, follow_redirects=False) as client:
        response = await client.get(url, headers={"accept": "application/json"})
        response.raise_for_status()
        return response.json()


def _client_from_document(url: str, document: Any) -> OAuthClientInformationFull | None:
    """The client a Client ID Metadata Document describes, or None when it is not one this
    server accepts (a public client: no secret)."""
    if not isinstance(document, dict) or document.get("client_id") != url:
        return None
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        return None
    if document.get("token_endpoint_auth_method", "none") != "none":
        return None
    try:
        return OAuthClientInformationFull(
            client_id=url,
            redirect_uris=[AnyUrl(u) for u in uris],
            token_endpoint_auth_method="none",
            grant_types=document.get("grant_types") or ["authorization_code", "refresh_token"],
            response_types=["code"],
            client_name=document.get("client_name"),
            scope=document.get("scope") or " ".join(DEFAULT_SCOPES),
        )
    except ValueError:
        return None


def _advertising(app: Any, provider: LocalAuthProvider) -> Any:
    """Rewrite the authorization server metadata: the issuer while
    ``provider.advertised_issuer`` is set, and ``client_id_metadata_document_supported``
    while ``provider.client_metadata_documents`` is."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or (provider.advertised_issuer is None and not provider.client_metadata_documents)
            or not path.startswith("/.well-known/oauth-authorization-server")
        ):
            await app(scope, receive, send)
            return
        started: dict[str, Any] = {}
        body = bytearray()

        async def capture(message: Any) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))

        await app(scope, receive, capture)
        data = json.loads(body) if started.get("status") == 200 else None
        if isinstance(data, dict):
            if provider.advertised_issuer is not None:
                data["issuer"] = provider.advertised_issuer
            if provider.client_metadata_documents:
                data["client_id_metadata_document_supported"] = True
            body[:] = json.dumps(data).encode()
        headers = [
            (k, v) for k, v in started.get("headers", []) if bytes(k).lower() != b"content-length"
        ]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**started, "headers": headers})
        await send({"type": "http.response.body", "body": bytes(body)})

    return wrapped


@dataclass
class OAuthTestServer:
    """A running protected MCP server and its authorization server.

    Attributes:
        url: the MCP endpoint (``http://127.0.0.1:<port>/mcp``).
        issuer: the authorization server's issuer (the origin).
        provider: the authorization server: switches, counters, ``add_client``.
        http: the underlying ``McpTestServer`` (stop/start, request switches).
    """

    url: str
    issuer: str
    provider: LocalAuthProvider
    http: McpTestServer


@contextlib.asynccontextmanager
async def serve_oauth_server(
    build_server: Callable[..., MCPServer] = build_notes_server,
    *,
    provider: LocalAuthProvider | None = None,
    scopes: tuple[str, ...] = DEFAULT_SCOPES,
    access_token_ttl: int = 3600,
    auto_approve: bool = True,
    deny: bool = False,
) -> AsyncIterator[OAuthTestServer]:
    """Serve an MCP server protected by a local authorization server on one loopback origin.

    Args:
        build_server: a factory taking ``MCPServer`` keyword arguments (the auth settings);
            the notes server by default.
        provider: a provider to use (a fresh ``LocalAuthProvider`` otherwise).
        scopes: the scopes clients may register and request.
        access_token_ttl: access-token lifetime in seconds.
        auto_approve: approve authorizations without the consent page.
        deny: deny every authorization.
    """
    auth = provider or LocalAuthProvider(
        access_token_ttl=access_token_ttl, auto_approve=auto_approve, deny=deny
    )
    holder: list[McpTestServer] = []

    def app() -> Any:
        # Called by the harness after it bound its socket, so the port is known here.
        origin = f"http://127.0.0.1:{holder[0].port}"
        auth.issuer_url, auth.resource_url = origin, f"{origin}/mcp"
        server = build_server(
            auth_server_provider=auth,
            auth=AuthSettings(
                issuer_url=AnyHttpUrl(origin),
                resource_server_url=AnyHttpUrl(auth.resource_url),
                validate_token_resource=True,
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=list(scopes), default_scopes=list(scopes)
                ),
                revocation_options=RevocationOptions(enabled=True),
            ),
        )

        async def consent(request: Request) -> Response:
            if request.method == "GET":
                request_id = request.query_params.get("request", "")
                return HTMLResponse(_CONSENT_PAGE.format(request=request_id))
            form = await request.form()
            try:
                target = auth.decide(str(form.get("request")), form.get("decision") == "approve")
            except KeyError:
                return HTMLResponse("unknown consent request", status_code=400)
            return RedirectResponse(target, status_code=302)

        server.custom_route("/consent", methods=["GET", "POST"])(consent)

        return _advertising(server.streamable_http_app(streamable_http_path="/mcp"), auth)

    http = McpTestServer(app)
    holder.append(http)
    async with http:
        yield OAuthTestServer(url=http.url, issuer=auth.issuer_url, provider=auth, http=http)
