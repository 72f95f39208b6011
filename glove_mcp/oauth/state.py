"""What an OAuth store holds per key, and small helpers to build client metadata.

Secrets (access and refresh tokens, the client secret, the PKCE verifier) are ``SecretStr`` or
excluded from ``repr``, so printing or logging a state never shows them. ``state_to_json`` /
``state_from_json`` are the only places that unwrap them, for persistence.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, SecretStr

__all__ = [
    "MCP_DEFAULT_CLIENT_INFO",
    "OAuthClientInfo",
    "OAuthState",
    "StoredTokens",
    "build_client_metadata",
    "empty_oauth_state",
    "state_from_json",
    "state_to_json",
]

MCP_DEFAULT_CLIENT_INFO: dict[str, str] = {"client_name": "Glove MCP client"}
"""Client metadata used for dynamic client registration when none is given."""

TokenEndpointAuthMethodName = Literal["none", "client_secret_basic", "client_secret_post"]


class StoredTokens(BaseModel):
    """Tokens with an *absolute* expiry, so a restart knows whether the access token still works.

    Attributes:
        access_token: the bearer token (masked in repr/str).
        refresh_token: the refresh token, if the server issued one (masked).
        token_type: always ``"Bearer"``.
        scope: the granted scope, space separated.
        expires_at: Unix time the access token expires, or ``None`` if the server gave no
            lifetime.
        obtained_at: Unix time these tokens were issued to us.
    """

    model_config = ConfigDict(frozen=True)

    access_token: SecretStr
    refresh_token: SecretStr | None = None
    token_type: str = "Bearer"
    scope: str | None = None
    expires_at: float | None = None
    obtained_at: float = Field(default_factory=time.time)

    @classmethod
    def from_oauth_token(cls, token: OAuthToken, now: float | None = None) -> StoredTokens:
        """Convert the SDK's token response, turning ``expires_in`` into an absolute time."""
        issued = time.time() if now is None else now
        return cls(
            access_token=SecretStr(token.access_token),
            refresh_token=SecretStr(token.refresh_token) if token.refresh_token else None,
            token_type=token.token_type,
            scope=token.scope,
            expires_at=issued + token.expires_in if token.expires_in is not None else None,
            obtained_at=issued,
        )

    def to_oauth_token(self, now: float | None = None) -> OAuthToken:
        """The SDK's token model, with ``expires_in`` counted from ``now`` (never negative)."""
        current = time.time() if now is None else now
        expires_in = max(0, int(self.expires_at - current)) if self.expires_at is not None else None
        return OAuthToken(
            access_token=self.access_token.get_secret_value(),
            refresh_token=self.refresh_token.get_secret_value() if self.refresh_token else None,
            scope=self.scope,
            expires_in=expires_in,
        )

    def is_fresh(self, skew: float, now: float | None = None) -> bool:
        """Whether the access token is still valid ``skew`` seconds from now."""
        if self.expires_at is None:
            return True
        current = time.time() if now is None else now
        return current + skew < self.expires_at


class OAuthClientInfo(BaseModel):
    """The registered client (from dynamic registration or pre-registered), secret masked.

    Attributes:
        client_id: the client id.
        client_secret: the client secret, if the client is confidential (masked).
        token_endpoint_auth_method: ``none``, ``client_secret_basic`` or ``client_secret_post``.
        full: everything the server answered at registration (secret removed).
    """

    model_config = ConfigDict(frozen=True)

    client_id: str
    client_secret: SecretStr | None = None
    token_endpoint_auth_method: str | None = None
    full: dict[str, Any] = Field(default_factory=dict, repr=False)

    @classmethod
    def from_sdk(cls, info: OAuthClientInformationFull) -> OAuthClientInfo:
        """Convert the SDK's client information record."""
        full = info.model_dump(mode="json", exclude_none=True, exclude={"client_secret"})
        return cls(
            client_id=info.client_id,
            client_secret=SecretStr(info.client_secret) if info.client_secret else None,
            token_endpoint_auth_method=info.token_endpoint_auth_method,
            full=full,
        )

    def to_sdk(self) -> OAuthClientInformationFull:
        """The SDK's client information record, secret included."""
        data = dict(self.full)
        data["client_id"] = self.client_id
        if self.client_secret is not None:
            data["client_secret"] = self.client_secret.get_secret_value()
        if self.token_endpoint_auth_method is not None:
            data["token_endpoint_auth_method"] = self.token_endpoint_auth_method
        return OAuthClientInformationFull.model_validate(data)


class OAuthState(BaseModel):
    """Everything stored for one key (one MCP server, one user).

    Attributes:
        server_url: the MCP server URL the tokens are for.
        client: the registered client, if registration happened.
        tokens: the current tokens, if logged in.
        code_verifier: the PKCE verifier of a login in progress (masked).
        token_endpoint: the authorization server's token endpoint, found at login.
        revocation_endpoint: its revocation endpoint, if it has one.
        issuer: the authorization server's issuer.
        resource: the RFC 8707 resource indicator the tokens were issued for.
        redirect_url: the redirect URL registered for the client.
    """

    model_config = ConfigDict(frozen=True)

    server_url: str | None = None
    client: OAuthClientInfo | None = None
    tokens: StoredTokens | None = None
    code_verifier: SecretStr | None = None
    token_endpoint: str | None = None
    revocation_endpoint: str | None = None
    issuer: str | None = None
    resource: str | None = None
    redirect_url: str | None = None


def empty_oauth_state(server_url: str | None = None) -> OAuthState:
    """A state with nothing in it yet (no client, no tokens).

    Args:
        server_url: the MCP server the state will be for.
    """
    return OAuthState(server_url=server_url)


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def state_to_json(state: OAuthState) -> dict[str, Any]:
    """A JSON-ready dict of ``state`` *with secrets in clear* — for stores only."""
    data = state.model_dump(mode="json", exclude={"client", "tokens", "code_verifier"})
    if state.client is not None:
        client = state.client.model_dump(mode="json", exclude={"client_secret"})
        client["client_secret"] = _secret(state.client.client_secret)
        data["client"] = client
    if state.tokens is not None:
        tokens = state.tokens.model_dump(mode="json", exclude={"access_token", "refresh_token"})
        tokens["access_token"] = state.tokens.access_token.get_secret_value()
        tokens["refresh_token"] = _secret(state.tokens.refresh_token)
        data["tokens"] = tokens
    data["code_verifier"] = _secret(state.code_verifier)
    return data


def state_from_json(data: Any) -> OAuthState:
    """Parse what ``state_to_json`` wrote.

    Raises:
        pydantic.ValidationError: the data is not a state.
    """
    return OAuthState.model_validate(data)


def build_client_metadata(
    redirect_url: str,
    client_info: dict[str, Any] | None = None,
    scope: str | None = None,
    token_endpoint_auth_method: TokenEndpointAuthMethodName | None = None,
) -> OAuthClientMetadata:
    """Client metadata for dynamic client registration (RFC 7591).

    Args:
        redirect_url: the loopback callback URL to register.
        client_info: extra metadata such as ``client_name``, ``client_uri``, ``software_id``;
            defaults to ``MCP_DEFAULT_CLIENT_INFO``.
        scope: the scopes to ask for, space separated.
        token_endpoint_auth_method: how the client authenticates at the token endpoint;
            ``none`` (a public client, the default for a CLI) when not given.
    """
    data: dict[str, Any] = dict(MCP_DEFAULT_CLIENT_INFO if client_info is None else client_info)
    data["redirect_uris"] = [AnyUrl(redirect_url)]
    data["grant_types"] = ["authorization_code", "refresh_token"]
    data["response_types"] = ["code"]
    data["token_endpoint_auth_method"] = token_endpoint_auth_method or "none"
    if scope is not None:
        data["scope"] = scope
    return OAuthClientMetadata.model_validate(data)
