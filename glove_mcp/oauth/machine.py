"""Machine-to-machine OAuth: the ``client_credentials`` grant, for agents nobody can log in for.

A headless server has no person to approve a consent screen. Its operator registers a client
with the authorization server out of band and gives the agent either a client secret
(``client_secret_basic`` / ``client_secret_post``) or a private key that signs a JWT assertion
(``private_key_jwt``, RFC 7523). ``client_credentials_auth`` returns an ``httpx2.Auth`` for
``connect_mcp(auth=...)`` that discovers the authorization server from the MCP server's 401
(RFC 9728, RFC 8414), asks for a token with those credentials, sends it, and asks for a new
one when it expires or is rejected. The grant itself is the SDK's
(``mcp.client.auth.extensions.client_credentials``); this module gives it a store and the
absolute-expiry bookkeeping the interactive provider has.

``identity_assertion_auth`` is the enterprise variant (SEP-990, cross-app access): the user's
identity provider exchanges their ID token for an identity assertion (ID-JAG, RFC 8693 token
exchange), which the MCP server's authorization server takes as a ``jwt-bearer`` grant
(RFC 7523) — single sign-on, with no consent screen per server.
"""

from __future__ import annotations

import warnings
from typing import Literal

import httpx2
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.exceptions import MCPDeprecationWarning

from glove_mcp.errors import OAuthFlowError
from glove_mcp.oauth.provider import StoredExpiry, StoreTokenStorage
from glove_mcp.oauth.store import MemoryOAuthStore, OAuthStore

__all__ = ["client_credentials_auth", "identity_assertion_auth"]

_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

SecretAuthMethod = Literal["client_secret_basic", "client_secret_post"]


class _Grant(StoredExpiry):
    """A ``client_credentials`` provider of the SDK's, over a store key."""

    method = ""

    def __init__(self, storage: StoreTokenStorage, **kwargs: object) -> None:
        self.storage = storage
        super().__init__(storage=storage, **kwargs)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"client_credentials_auth(key={self.storage.key!r}, method={self.method!r})"


class _SecretGrant(_Grant, ClientCredentialsOAuthProvider):
    method = "client_secret"


class _JwtGrant(_Grant, PrivateKeyJWTOAuthProvider):
    method = "private_key_jwt"


def client_credentials_auth(
    server_url: str,
    client_id: str,
    *,
    client_secret: str | None = None,
    private_key: str | None = None,
    signing_algorithm: str = "RS256",
    token_endpoint_auth_method: SecretAuthMethod = "client_secret_basic",
    scope: str | None = None,
    issuer: str | None = None,
    store: OAuthStore | None = None,
    key: str | None = None,
) -> httpx2.Auth:
    """Credentials for a headless agent: OAuth ``client_credentials`` with a pre-registered
    client, for ``connect_mcp(url, auth=client_credentials_auth(...))``.

    Give exactly one of ``client_secret`` and ``private_key``.

    Args:
        server_url: the MCP endpoint.
        client_id: the client registered with the authorization server.
        client_secret: its secret (sent as ``token_endpoint_auth_method`` says).
        private_key: a PEM private key; each token request carries a JWT assertion signed
            with it (``private_key_jwt``, RFC 7523), whose audience is the authorization
            server's issuer.
        signing_algorithm: the JWT algorithm for ``private_key``, e.g. ``RS256``, ``ES256``.
        token_endpoint_auth_method: how ``client_secret`` is sent: ``client_secret_basic``
            (an Authorization header) or ``client_secret_post`` (form fields).
        scope: scopes to ask for, space separated.
        issuer: the authorization server that registered the client. When given, tokens are
            only requested from that server, whatever the MCP server's metadata says; set it
            in production.
        store: where tokens are kept between restarts (a process-local store if omitted).
        key: the store key (the server URL if omitted).

    Returns:
        An ``httpx2.Auth`` that gets, sends and renews the token.

    Raises:
        ValueError: neither or both of ``client_secret`` and ``private_key``.
    """
    if (client_secret is None) == (private_key is None):
        raise ValueError(
            "client_credentials_auth: give client_secret= (client_secret_basic/post) or "
            "private_key= (private_key_jwt), exactly one"
        )
    storage = StoreTokenStorage(store or MemoryOAuthStore(), key or server_url, server_url)
    with warnings.catch_warnings():
        # The SDK warns when no issuer pins the authorization server; ours is documented.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if client_secret is not None:
            return _SecretGrant(
                storage,
                server_url=server_url,
                client_id=client_id,
                client_secret=client_secret,
                token_endpoint_auth_method=token_endpoint_auth_method,
                scope=scope,
                issuer=issuer,
            )
        assert private_key is not None
        assertion = SignedJWTParameters(
            issuer=client_id,
            subject=client_id,
            signing_key=private_key,
            signing_algorithm=signing_algorithm,
        ).create_assertion_provider()
        return _JwtGrant(
            storage,
            server_url=server_url,
            client_id=client_id,
            assertion_provider=assertion,
            scope=scope,
            issuer=issuer,
        )


def identity_assertion_auth(
    server_url: str,
    client_id: str,
    client_secret: str,
    issuer: str,
    *,
    idp_token_endpoint: str,
    id_token: str,
    idp_client_id: str,
    scope: str | None = None,
    token_endpoint_auth_method: SecretAuthMethod = "client_secret_basic",
    store: OAuthStore | None = None,
    key: str | None = None,
) -> httpx2.Auth:
    """Enterprise single sign-on (SEP-990): trade the user's ID token for an MCP access token.

    On the MCP server's 401, the identity provider's token endpoint exchanges ``id_token``
    for an ID-JAG meant for ``issuer`` and the server (RFC 8693), and ``issuer``'s token
    endpoint exchanges that for an access token (``jwt-bearer``, RFC 7523), authenticating
    with ``client_id`` / ``client_secret``. Tokens are only ever sent to ``issuer``.

    Args:
        server_url: the MCP endpoint.
        client_id: the client registered with the MCP server's authorization server.
        client_secret: its secret.
        issuer: that authorization server's issuer (configuration, never discovered).
        idp_token_endpoint: the identity provider's token endpoint.
        id_token: the user's ID token from the identity provider.
        idp_client_id: this application's client id at the identity provider.
        scope: scopes to ask for, space separated.
        token_endpoint_auth_method: how the secret is sent to ``issuer``.
        store: where tokens are kept (a process-local store if omitted).
        key: the store key (the server URL if omitted).

    Returns:
        An ``httpx2.Auth`` for ``connect_mcp(auth=...)``.
    """

    async def exchange(audience: str, resource: str) -> str:
        form = {
            "grant_type": _TOKEN_EXCHANGE,
            "requested_token_type": _ID_JAG,
            "audience": audience,
            "resource": resource,
            "subject_token": id_token,
            "subject_token_type": _ID_TOKEN,
            "client_id": idp_client_id,
        }
        async with httpx2.AsyncClient(timeout=30) as client:
            response = await client.post(idp_token_endpoint, data=form)
        try:
            assertion = response.json().get("access_token") if response.status_code == 200 else None
        except ValueError:
            assertion = None
        if not isinstance(assertion, str):
            raise OAuthFlowError(
                f"the identity provider at {idp_token_endpoint} did not exchange the ID token "
                f"for an identity assertion (HTTP {response.status_code}); sign in to it again"
            )
        return assertion

    storage = StoreTokenStorage(store or MemoryOAuthStore(), key or server_url, server_url)
    return IdentityAssertionOAuthProvider(
        server_url=server_url,
        storage=storage,
        client_id=client_id,
        client_secret=client_secret,
        issuer=issuer,
        assertion_provider=exchange,
        scope=scope,
        token_endpoint_auth_method=token_endpoint_auth_method,
    )
