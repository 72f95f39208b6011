"""``McpOAuthProvider``: the SDK's ``OAuthClientProvider`` backed by an ``OAuthStore`` key.

The SDK does discovery (RFC 9728, RFC 8414), dynamic client registration, PKCE S256, the
``resource`` indicator and the code exchange. What we add:

- its ``TokenStorage`` is a view of one key of an ``OAuthStore``;
- tokens are persisted with an absolute expiry and that expiry is restored into the provider
  when it initialises, so after a restart an expired access token is refreshed instead of
  being sent, rejected, and followed by a full browser login (the SDK's known gap);
- the discovered token/revocation endpoints, issuer and resource are saved next to the
  tokens, so ``OAuthTokenSource`` can refresh later without rediscovery.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth import OAuthFlowError as SdkOAuthFlowError
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from glove_mcp.oauth._callback import parse_authorization_response
from glove_mcp.oauth.state import (
    OAuthClientInfo,
    OAuthState,
    StoredTokens,
    empty_oauth_state,
)
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.url_policy import UrlPolicy, guard_auth_flow

__all__ = [
    "Authorizer",
    "McpOAuthProvider",
    "StoreTokenStorage",
    "StoredExpiry",
    "authorization_result",
]

logger = logging.getLogger(__name__)

Authorizer = Callable[[str], Awaitable[str]]
"""``authorize(authorization_url) -> redirected_url``: takes the URL a person would open and
returns the URL the browser was redirected to (or just the code). The seam for scripts, tests
and custom UIs that complete a login without the loopback listener."""


def authorization_result(redirected: str, expected_state: str | None) -> AuthorizationCodeResult:
    """Parse what an ``Authorizer`` returned: a redirected URL (``code``, ``state``, ``iss`` or
    ``error`` in its query) or a bare code.

    Raises:
        OAuthAuthorizationDeniedError: the redirect carries ``error=`` (e.g. access_denied).
        OAuthStateMismatchError: its ``state`` is not this login's.
        OAuthFlowError: it carries neither a code nor an error.
    """
    return parse_authorization_response(redirected, expected_state)


class StoreTokenStorage:
    """The SDK's ``TokenStorage`` protocol over one key of an ``OAuthStore``.

    Args:
        store: the store.
        key: the key.
        server_url: the MCP server URL, recorded in a new state.
        hide_tokens: report no tokens to the SDK (forces a fresh login) while still saving
            the new ones.
        client_metadata_url: the client's metadata document URL, if it has one: a client
            stored under another id was registered dynamically (noted as deprecated).
    """

    def __init__(
        self,
        store: OAuthStore,
        key: str,
        server_url: str,
        *,
        hide_tokens: bool = False,
        client_metadata_url: str | None = None,
    ) -> None:
        self.store = store
        self.key = key
        self.server_url = server_url
        self.hide_tokens = hide_tokens
        self.client_metadata_url = client_metadata_url

    def __repr__(self) -> str:
        return f"StoreTokenStorage(store={self.store!r}, key={self.key!r})"

    async def state(self) -> OAuthState:
        """The key's state, or an empty one."""
        return await self.store.get(self.key) or empty_oauth_state(self.server_url)

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens in the SDK's shape (``expires_in`` counted from now)."""
        if self.hide_tokens:
            return None
        state = await self.state()
        return state.tokens.to_oauth_token() if state.tokens else None

    async def stored_expiry(self) -> float | None:
        """The absolute expiry of the stored access token."""
        state = await self.state()
        return state.tokens.expires_at if state.tokens and not self.hide_tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Persist new tokens with an absolute expiry."""
        state = await self.state()
        stored = StoredTokens.from_oauth_token(tokens)
        await self.store.set(
            self.key, state.model_copy(update={"tokens": stored, "code_verifier": None})
        )
        self.hide_tokens = False

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The registered client, if any."""
        state = await self.state()
        return state.client.to_sdk() if state.client else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Persist the registered client (the SDK calls this after a Client ID Metadata
        Document was chosen, or after dynamic registration)."""
        if client_info.client_id != self.client_metadata_url:
            # The SDK uses the document whenever the authorization server supports it, so
            # anything else came from dynamic registration: still served, deprecated since
            # 2025-11-25.
            hint = (
                "its authorization server does not support Client ID Metadata Documents"
                if self.client_metadata_url
                else "host a Client ID Metadata Document and pass its URL (client_metadata_url)"
            )
            logger.warning(
                "MCP server %s: this client was registered dynamically, which is deprecated "
                "in favour of Client ID Metadata Documents (%s)",
                self.server_url,
                hint,
            )
        state = await self.state()
        await self.store.set(
            self.key, state.model_copy(update={"client": OAuthClientInfo.from_sdk(client_info)})
        )


class StoredExpiry(OAuthClientProvider):
    """An SDK OAuth provider over a ``StoreTokenStorage`` that restores the stored token's
    absolute expiry when it initialises: the SDK keeps none across restarts, so it would
    treat an expired stored token as valid, send it, and only then start over."""

    storage: StoreTokenStorage
    url_policy: UrlPolicy = UrlPolicy()
    """What every request of the flow is checked against before it is sent."""

    def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, with every URL it fetches checked by ``url_policy`` first."""
        return guard_auth_flow(
            super().async_auth_flow(request),
            request,
            self.url_policy,
            self.context.server_url,
            self._named_servers,
        )

    def _named_servers(self) -> list[str]:
        metadata = self.context.protected_resource_metadata
        return [str(url) for url in metadata.authorization_servers] if metadata else []

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = await self.storage.stored_expiry()


class McpOAuthProvider(StoredExpiry):
    """An ``httpx2.Auth`` that logs in and refreshes through the SDK, persisting to a store.

    Use it directly to drive the SDK's flow yourself (``httpx2.AsyncClient(auth=provider)``);
    most code wants ``run_mcp_oauth`` to log in and ``OAuthTokenSource`` afterwards. Two
    limits are the SDK's: its refresh is not serialised across processes, and on a 401 for a
    token it believes valid it starts a browser login instead of refreshing. A headless agent
    should therefore use ``OAuthTokenSource`` (with ``bearer(source)``), not this provider.

    Args:
        server_url: the MCP server URL.
        store: where client information and tokens are kept.
        key: the store key.
        client_metadata: metadata for dynamic registration (``build_client_metadata``).
        redirect_handler: called with the authorization URL (open a browser, print it, …).
        callback_handler: returns the code and state once the user has approved.
        hide_stored_tokens: ignore stored tokens (force a new login), keep the client.
        scope: scopes to request at authorization; the SDK otherwise replaces the metadata's
            scope with what the server advertises.
        authorize: instead of ``redirect_handler`` and ``callback_handler``: given the
            authorization URL, return the redirected URL (see ``Authorizer``). A connection
            with this auth can log in again by itself, e.g. to step up its scopes when the
            server answers 403 ``insufficient_scope``.
        client_metadata_url: an HTTPS URL whose document describes this client (a Client ID
            Metadata Document); used as the client id, instead of dynamic registration, when
            the authorization server supports it.
        url_policy: what the URLs the login fetches are checked against (``UrlPolicy()``:
            https except loopback, no private targets from a public server, metadata only
            along the trust chain).

    Raises:
        ValueError: ``authorize`` given together with a redirect or callback handler, or a
            ``client_metadata_url`` that is not an HTTPS URL with a path.
    """

    def __init__(
        self,
        server_url: str,
        store: OAuthStore,
        key: str,
        client_metadata: OAuthClientMetadata,
        redirect_handler: Callable[[str], Awaitable[None]] | None = None,
        callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
        *,
        hide_stored_tokens: bool = False,
        scope: str | None = None,
        authorize: Authorizer | None = None,
        client_metadata_url: str | None = None,
        url_policy: UrlPolicy | None = None,
    ) -> None:
        if url_policy is not None:
            self.url_policy = url_policy
        if authorize is not None:
            if redirect_handler is not None or callback_handler is not None:
                raise ValueError(
                    "McpOAuthProvider: give authorize= or redirect_handler/callback_handler, "
                    "not both"
                )
            redirect_handler, callback_handler = _handlers(authorize)
        self._requested_scope = scope
        self.storage = StoreTokenStorage(
            store,
            key,
            server_url,
            hide_tokens=hide_stored_tokens,
            client_metadata_url=client_metadata_url,
        )
        try:
            super().__init__(
                server_url=server_url,
                client_metadata=client_metadata,
                storage=self.storage,
                redirect_handler=redirect_handler,
                callback_handler=callback_handler,
                client_metadata_url=client_metadata_url,
            )
        except ValueError:
            raise ValueError(
                f"client_metadata_url must be an HTTPS URL with a path (e.g. "
                f"https://example.com/client.json), not {client_metadata_url!r}"
            ) from None

    authorizations = 0
    """How many authorization requests (consent screens) this provider started."""
    max_authorizations = 3
    """At most this many per provider: a scope step-up that never succeeds stops here."""

    def __repr__(self) -> str:
        return f"McpOAuthProvider(server_url={self.context.server_url!r}, key={self.storage.key!r})"

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # The SDK picks scopes from discovery right before authorizing; the caller's explicit
        # choice wins.
        if self._requested_scope is not None:
            self.context.client_metadata.scope = self._requested_scope
        self.authorizations += 1
        if self.authorizations > self.max_authorizations:
            # A server that keeps asking for more (403 insufficient_scope after every new
            # grant) would otherwise send the person through consent screens forever.
            raise SdkOAuthFlowError(
                f"gave up after {self.max_authorizations} authorizations: the server keeps "
                "asking for scopes it never accepts"
            )
        return await super()._perform_authorization_code_grant()

    async def save_discovery(self) -> OAuthState:
        """Record what the SDK discovered (endpoints, issuer, resource) in the store.

        Returns:
            The updated state.
        """
        ctx = self.context
        state = await self.storage.state()
        update: dict[str, object] = {
            "server_url": ctx.server_url,
            "resource": ctx.get_resource_url(),
        }
        if ctx.oauth_metadata is not None:
            update["token_endpoint"] = str(ctx.oauth_metadata.token_endpoint)
            update["issuer"] = str(ctx.oauth_metadata.issuer)
            if ctx.oauth_metadata.revocation_endpoint is not None:
                update["revocation_endpoint"] = str(ctx.oauth_metadata.revocation_endpoint)
        if ctx.client_metadata.redirect_uris:
            update["redirect_url"] = str(ctx.client_metadata.redirect_uris[0])
        new_state = state.model_copy(update=update)
        await self.storage.store.set(self.storage.key, new_state)
        return new_state


def _handlers(
    authorize: Authorizer,
) -> tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[AuthorizationCodeResult]]]:
    """The SDK's redirect/callback handler pair around one ``Authorizer``."""
    pending: list[tuple[str, str | None]] = []

    async def redirect_handler(url: str) -> None:
        state = parse_qs(urlparse(url).query).get("state", [None])[0]
        pending.append((await authorize(url), state))

    async def callback_handler() -> AuthorizationCodeResult:
        redirected, state = pending.pop()
        return authorization_result(redirected, state)

    return redirect_handler, callback_handler
