"""The authorization code flow split across two HTTP requests, for a server behind a load
balancer: ``begin_web_authorization`` (discovery, registration, PKCE, the authorization URL)
and ``finish_web_authorization`` (the ``iss`` check and the code exchange).

Nothing waits in memory between the two: everything the second step needs is returned by the
first (``WebAuthorization.flow``) for the caller to keep in its database, so the callback may
land on another instance. The protocol pieces are the mcp SDK's (its discovery URL lists, the
metadata and registration handling, issuer checks, PKCE, client authentication at the token
endpoint); what ``run_mcp_oauth`` does in one process is done here in two steps.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlparse

import httpx2
from mcp.client.auth.exceptions import OAuthFlowError as SdkOAuthFlowError
from mcp.client.auth.exceptions import OAuthRegistrationError as SdkRegistrationError
from mcp.client.auth.oauth2 import OAuthContext, PKCEParameters
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_client_info_from_metadata_url,
    create_client_registration_request,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    get_client_metadata_scopes,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    handle_registration_response,
    issuers_match,
    should_use_client_metadata_url,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed
from pydantic import AnyUrl, ValidationError

from glove_mcp.errors import OAuthFlowError
from glove_mcp.oauth.state import (
    OAuthClientInfo,
    OAuthState,
    StoredTokens,
    build_client_metadata,
)
from glove_mcp.resource_keys import canonical_resource

__all__ = ["WebAuthorization", "begin_web_authorization", "finish_web_authorization"]

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "glove-mcp", "version": "0"},
    },
}


@dataclass(frozen=True)
class WebAuthorization:
    """A started authorization.

    Attributes:
        authorize_url: where the person's browser goes.
        state: the ``state`` parameter the callback must bring back (secret).
        flow: what ``finish_web_authorization`` needs (secret: the PKCE verifier, the client).
    """

    authorize_url: str = field(repr=False)
    state: str = field(repr=False)
    flow: dict[str, Any] = field(repr=False)


def _origin(url: str) -> str:
    parsed = urlparse(url)
    return f"{parsed.scheme}://{parsed.netloc}"


async def _protected_resource(
    http: httpx2.AsyncClient, server_url: str
) -> tuple[ProtectedResourceMetadata | None, str | None, bool]:
    """The server's 401 (its resource metadata and scope hints), then its metadata.

    Returns:
        The metadata (None: none published), the scope the 401 named, and whether the
        server answered the request without credentials (it needs no login).
    """
    response = await http.post(
        server_url,
        json=_INITIALIZE,
        headers={"Accept": "application/json, text/event-stream"},
    )
    await response.aclose()
    if 200 <= response.status_code < 300:
        return None, None, True
    hint = scope = None
    if response.status_code == 401:
        hint = extract_resource_metadata_from_www_auth(response)
        scope = extract_scope_from_www_auth(response)
    for url in build_protected_resource_metadata_discovery_urls(hint, server_url):
        found = await handle_protected_resource_response(
            await http.send(create_oauth_metadata_request(url))
        )
        if found is not None:
            if not check_resource_allowed(canonical_resource(server_url), str(found.resource)):
                raise OAuthFlowError(
                    f"the server's metadata names the resource {found.resource}, not "
                    f"{server_url}; check the server URL"
                )
            return found, scope, False
    return None, scope, False


async def _authorization_server(
    http: httpx2.AsyncClient, auth_server_url: str | None, server_url: str
) -> OAuthMetadata:
    expected = auth_server_url or _origin(server_url)
    for url in build_oauth_authorization_server_metadata_discovery_urls(
        auth_server_url, server_url
    ):
        ok, metadata = await handle_auth_metadata_response(
            await http.send(create_oauth_metadata_request(url))
        )
        if not ok:
            break
        if metadata is not None:
            if not issuers_match(str(metadata.issuer), expected):
                raise OAuthFlowError(
                    f"the authorization server's metadata names the issuer {metadata.issuer}, "
                    f"not {expected}; refusing to log in there"
                )
            return metadata
    raise OAuthFlowError(f"found no authorization server metadata for {server_url}")


async def begin_web_authorization(
    server_url: str,
    redirect_uri: str,
    *,
    http: httpx2.AsyncClient,
    client_info: Mapping[str, Any] | None = None,
    pre_registered_client: Mapping[str, Any] | None = None,
    client_metadata_url: str | None = None,
    scope: str | None = None,
) -> WebAuthorization | None:
    """Discover the server's authorization server, register (or use the configured client),
    and build the authorization URL with PKCE S256, ``state`` and the RFC 8707 ``resource``.

    Args:
        server_url: the MCP server.
        redirect_uri: where the authorization server sends the browser back.
        http: the client for discovery and registration (not closed here).
        client_info: registration metadata (``client_name``, …).
        pre_registered_client: ``client_id`` (and ``client_secret``,
            ``token_endpoint_auth_method``) registered out of band: no registration.
        client_metadata_url: an HTTPS URL of this client's metadata document, used as the
            client id where the authorization server supports it.
        scope: the scopes to ask for (else those the server names).

    Returns:
        The started authorization, or ``None`` when the server needs no login.

    Raises:
        OAuthFlowError: discovery or registration failed, or the metadata is for another
            resource or issuer.
        httpx2.HTTPError: the server or authorization server cannot be reached.
    """
    prm, hinted_scope, open_server = await _protected_resource(http, server_url)
    if open_server:
        return None
    auth_server_url = str(prm.authorization_servers[0]) if prm is not None else None
    metadata = await _authorization_server(http, auth_server_url, server_url)
    client_metadata = build_client_metadata(redirect_uri, dict(client_info or {}) or None)
    client_metadata.scope = scope or get_client_metadata_scopes(
        hinted_scope, prm, metadata, client_metadata.grant_types
    )
    client = await _client(
        http, metadata, client_metadata, redirect_uri, pre_registered_client, client_metadata_url
    )
    pkce = PKCEParameters.generate()
    state = secrets.token_urlsafe(32)
    resource = str(prm.resource) if prm is not None else canonical_resource(server_url)
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce.code_challenge,
        "code_challenge_method": "S256",
        "resource": resource,
    }
    if client_metadata.scope:
        params["scope"] = client_metadata.scope
    endpoint = str(metadata.authorization_endpoint)
    token_endpoint = str(metadata.token_endpoint)
    flow = {
        "verifier": pkce.code_verifier,
        "client": client.model_dump(mode="json", exclude_none=True),
        "redirect_uri": redirect_uri,
        "issuer": str(metadata.issuer),
        "iss_required": bool(metadata.authorization_response_iss_parameter_supported),
        "token_endpoint": token_endpoint,
        "revocation_endpoint": (
            str(metadata.revocation_endpoint) if metadata.revocation_endpoint else None
        ),
        "resource": resource,
    }
    separator = "&" if "?" in endpoint else "?"
    return WebAuthorization(f"{endpoint}{separator}{urlencode(params)}", state, flow)


async def _client(
    http: httpx2.AsyncClient,
    metadata: OAuthMetadata,
    client_metadata: OAuthClientMetadata,
    redirect_uri: str,
    pre_registered: Mapping[str, Any] | None,
    client_metadata_url: str | None,
) -> OAuthClientInformationFull:
    if pre_registered is not None:
        data = dict(pre_registered)
        data.setdefault("redirect_uris", [redirect_uri])
        if data.get("client_secret") and "token_endpoint_auth_method" not in data:
            data["token_endpoint_auth_method"] = "client_secret_basic"
        return OAuthClientInformationFull.model_validate(data)
    if should_use_client_metadata_url(metadata, client_metadata_url):
        assert client_metadata_url is not None
        return create_client_info_from_metadata_url(
            client_metadata_url, redirect_uris=[AnyUrl(redirect_uri)]
        )
    if metadata.registration_endpoint is None:
        raise OAuthFlowError(
            "the authorization server offers no dynamic registration: configure a "
            "pre-registered client for this server"
        )
    request = create_client_registration_request(
        metadata, client_metadata, _origin(str(metadata.issuer))
    )
    try:
        return await handle_registration_response(await http.send(request))
    except (SdkRegistrationError, SdkOAuthFlowError) as exc:
        raise OAuthFlowError(f"client registration failed: {str(exc)[:200]}") from None


async def finish_web_authorization(
    flow: Mapping[str, Any],
    server_url: str,
    code: str,
    iss: str | None,
    *,
    http: httpx2.AsyncClient,
) -> OAuthState:
    """Check the callback's issuer (RFC 9207) and exchange the code for tokens.

    Args:
        flow: ``WebAuthorization.flow`` as it was kept.
        server_url: the server the tokens are for.
        code: the authorization code.
        iss: the callback's ``iss`` parameter, if any.
        http: the client for the token request (not closed here).

    Returns:
        The state to store: tokens, client, endpoints, issuer and resource, bound to
        ``server_url``.

    Raises:
        OAuthFlowError: a wrong or missing issuer, or the exchange was refused.
        httpx2.HTTPError: the authorization server cannot be reached.
    """
    issuer = str(flow["issuer"])
    if iss is not None and iss != issuer:
        raise OAuthFlowError(f"the callback came from issuer {iss!r}, not {issuer!r}")
    if iss is None and flow.get("iss_required"):
        raise OAuthFlowError(f"the callback lacks the iss parameter that {issuer} promises")
    client = OAuthClientInformationFull.model_validate(flow["client"])
    redirect_uri = str(flow["redirect_uri"])
    context = OAuthContext(
        server_url=server_url,
        client_metadata=OAuthClientMetadata(redirect_uris=[AnyUrl(redirect_uri)]),
        storage=_NoStorage(),
        redirect_handler=None,
        callback_handler=None,
        client_info=client,
    )
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "client_id": client.client_id,
        "code_verifier": str(flow["verifier"]),
        "resource": str(flow["resource"]),
    }
    form, headers = context.prepare_token_auth(
        data, {"Content-Type": "application/x-www-form-urlencoded"}
    )
    token_endpoint = str(flow["token_endpoint"])
    response = await http.post(token_endpoint, data=form, headers=headers)
    if response.status_code != 200:
        error = _error_code(response)
        raise OAuthFlowError(
            f"the authorization server refused the code (HTTP {response.status_code}"
            f"{', ' + error if error else ''})"
        )
    try:
        token = OAuthToken.model_validate_json(response.content)
    except ValidationError:
        raise OAuthFlowError(
            "the authorization server answered an invalid token response"
        ) from None
    return OAuthState(
        server_url=server_url,
        client=OAuthClientInfo.from_sdk(client),
        tokens=StoredTokens.from_oauth_token(token),
        token_endpoint=token_endpoint,
        revocation_endpoint=flow.get("revocation_endpoint"),
        issuer=issuer,
        resource=str(flow["resource"]),
        redirect_url=redirect_uri,
    )


def _error_code(response: httpx2.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    # Only a short code: the description is the server's text, shown to nobody.
    return error[:64] if isinstance(error, str) else None


class _NoStorage:
    """The SDK context wants a token storage; the exchange never touches it."""

    async def get_tokens(self) -> OAuthToken | None:
        return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        return None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        return None
