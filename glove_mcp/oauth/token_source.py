"""``OAuthTokenSource``: a valid access token on demand, refreshed silently and only once.

Refreshes happen ahead of expiry (``skew`` seconds) and after the server rejected a token
(``invalidate`` / ``force_refresh``). One refresh runs at a time per source (an asyncio lock)
and per store key across processes (the store's ``lock``); after taking the lock the state is
read again, because another task or process may have refreshed meanwhile — spending the same
refresh token twice would, with rotation, revoke it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal
from urllib.parse import urljoin, urlparse

import httpx2
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl, ValidationError

from glove_mcp.errors import (
    OAuthLoginRequiredError,
    OAuthRefreshError,
    OAuthRefreshRejectedError,
    OAuthRevocationError,
)
from glove_mcp.oauth.provider import StoreTokenStorage
from glove_mcp.oauth.state import OAuthState, StoredTokens
from glove_mcp.oauth.store import LockingOAuthStore, OAuthStore
from glove_mcp.oauth.url_policy import UrlPolicy
from glove_mcp.resource_keys import same_resource

__all__ = ["OAuthTokenSource", "RevocationOutcome", "default_login_command"]

logger = logging.getLogger(__name__)

# Token-endpoint errors that mean "this refresh token will never work again".
_REJECTED = {"invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope"}

RevocationOutcome = Literal["revoked", "no_revocation_endpoint", "no_tokens"]
"""What ``OAuthTokenSource.revoke`` did: revoked the tokens at the authorization server; found
no revocation endpoint (the server advertises none, so the tokens stay valid there until they
expire); or found no tokens to revoke."""


def default_login_command(key: str, server_url: str | None) -> str:
    """The login instruction used in errors when none is configured."""
    url = server_url if server_url is not None else "<server url>"
    return f"run_mcp_oauth({url!r}, store, key={key!r})"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class OAuthTokenSource:
    """Hands out a valid access token for one store key, refreshing it when needed.

    It satisfies ``glove_mcp.auth.TokenSource``: ``connect_mcp(..., auth=bearer(source))``
    asks it for a token per request and, after a 401, for a fresh one
    (``access_token(force_refresh=True)``) before resending once. An
    ``McpAdapter.get_access_token`` can simply return ``await source.access_token()``; code
    that sees a 401 itself calls ``await source.invalidate(token)`` and asks again.

    Args:
        store: where ``run_mcp_oauth`` saved the tokens.
        key: the store key.
        server_url: the MCP server URL (used in messages, and to find the token endpoint if
            the state has none).
        skew: refresh this many seconds before the access token expires.
        login_command: what the user should run when refresh is impossible; named in
            ``OAuthLoginRequiredError``.
        http_client: an ``httpx2.AsyncClient`` for token requests (not closed by us); a
            short-lived one is made per refresh otherwise.
        min_refresh_interval: a ``force_refresh`` does not refresh a token obtained less than
            this many seconds ago; it returns it. Many requests that were rejected with the
            same old token then cause one refresh, not one each. ``invalidate(token)`` names
            the rejected token exactly and is not limited.
        url_policy: what the token and revocation endpoints are checked against before a
            refresh or revocation is sent (default ``UrlPolicy()``; see ``run_mcp_oauth``).
    """

    def __init__(
        self,
        store: OAuthStore,
        key: str,
        server_url: str | None = None,
        *,
        skew: float = 60.0,
        login_command: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        min_refresh_interval: float = 5.0,
        url_policy: UrlPolicy | None = None,
    ) -> None:
        self.url_policy = url_policy or UrlPolicy()
        if skew < 0:
            raise ValueError(f"skew must be >= 0 seconds, got {skew!r}")
        if min_refresh_interval < 0:
            raise ValueError(
                f"min_refresh_interval must be >= 0 seconds, got {min_refresh_interval!r}"
            )
        self.min_refresh_interval = min_refresh_interval
        self.store = store
        self.key = key
        self.server_url = server_url
        self.skew = skew
        self.login_command = login_command or default_login_command(key, server_url)
        self._http_client = http_client
        self._task_lock = asyncio.Lock()
        self._rejected: set[str] = set()
        self.refresh_count = 0
        """How many refresh requests this source sent (for tests and metrics)."""

    def __repr__(self) -> str:
        return f"OAuthTokenSource(key={self.key!r}, server_url={self.server_url!r})"

    async def access_token(self, *, force_refresh: bool = False) -> str:
        """A valid access token.

        Args:
            force_refresh: refresh even if the current token looks valid (e.g. after a 401).

        Raises:
            OAuthLoginRequiredError: no tokens, or the refresh token was rejected.
            OAuthRefreshError: the refresh failed for a passing reason (network, 5xx).
        """
        state = await self._load()
        tokens = self._require_tokens(state)
        current = tokens.access_token.get_secret_value()
        if force_refresh:
            if time.time() - tokens.obtained_at < self.min_refresh_interval and tokens.is_fresh(
                self.skew
            ):
                # Just obtained (probably by another task's refresh after the same 401).
                return current
            self._rejected.add(_digest(current))
        elif self._usable(tokens):
            return current
        return await self._refresh_single_flight()

    async def invalidate(self, token: str | None = None) -> None:
        """Mark a token as rejected by the server, so the next ``access_token`` refreshes.

        Args:
            token: the token the server rejected; the currently stored one if not given.
                Passing it avoids refreshing twice when another task already replaced it.
        """
        if token is None:
            state = await self.store.get(self.key)
            if state is None or state.tokens is None:
                return
            token = state.tokens.access_token.get_secret_value()
        self._rejected.add(_digest(token))

    async def revoke(self) -> RevocationOutcome:
        """Revoke the stored tokens at the authorization server (RFC 7009).

        The refresh token goes first (revoking it also ends the access tokens of its grant,
        on servers that follow RFC 7009 section 2.1), then the access token. The store is not
        changed: delete the key afterwards to log out (``glove-mcp logout`` does both). A
        server that cannot revoke access tokens (``unsupported_token_type``) is not an error
        once the refresh token is revoked.

        Returns:
            ``"revoked"``, ``"no_revocation_endpoint"`` (the authorization server advertised
            none at login) or ``"no_tokens"``.

        Raises:
            OAuthRevocationError: the server refused or could not be reached; the tokens may
                still work.
        """
        async with self._task_lock, self._store_lock():
            state = await self.store.get(self.key)
            if state is None or state.tokens is None:
                return "no_tokens"
            url = state.revocation_endpoint
            if url is None or state.client is None:
                return "no_revocation_endpoint"
            tokens = state.tokens
            pending = [("access_token", tokens.access_token.get_secret_value())]
            if tokens.refresh_token is not None:
                pending.insert(0, ("refresh_token", tokens.refresh_token.get_secret_value()))
            for hint, token in pending:
                data = {"token": token, "token_type_hint": hint}
                if state.client.client_secret is None:
                    # A public client's empty secret (RFC 6749 2.3.1 lets it be sent or
                    # omitted): the mcp SDK's revocation endpoint requires the field.
                    data["client_secret"] = ""
                try:
                    response = await self._post_as_client(state, url, data)
                except httpx2.HTTPError as exc:
                    raise OAuthRevocationError(self.key, url, type(exc).__name__) from None
                if response.status_code == 200:
                    continue
                error, _ = _oauth_error(response)
                grant_revoked = hint == "access_token" and len(pending) > 1
                if error == "unsupported_token_type" and grant_revoked:
                    continue
                reason = f"HTTP {response.status_code}" + (f" {error}" if error else "")
                raise OAuthRevocationError(self.key, url, reason)
            logger.debug("revoked the OAuth tokens of key %r at %s", self.key, url)
            return "revoked"

    async def state(self) -> OAuthState | None:
        """The stored state for this key (secrets masked in its repr)."""
        return await self.store.get(self.key)

    # -- internals --------------------------------------------------------------------

    def _usable(self, tokens: StoredTokens) -> bool:
        return tokens.is_fresh(self.skew) and (
            _digest(tokens.access_token.get_secret_value()) not in self._rejected
        )

    async def _load(self) -> OAuthState:
        state = await self.store.get(self.key)
        if state is None:
            raise OAuthLoginRequiredError(self.key, self.login_command, "no tokens are stored")
        if (
            self.server_url is not None
            and state.server_url is not None
            and not same_resource(state.server_url, self.server_url)
        ):
            # Never sent, never refreshed: a token goes only to the resource it was issued for.
            raise OAuthLoginRequiredError(
                self.key,
                self.login_command,
                f"the stored tokens were issued for {state.server_url}, not {self.server_url}",
            )
        return state

    def _require_tokens(self, state: OAuthState) -> StoredTokens:
        if state.tokens is None:
            raise OAuthLoginRequiredError(self.key, self.login_command, "no tokens are stored")
        return state.tokens

    @asynccontextmanager
    async def _store_lock(self) -> AsyncIterator[None]:
        if isinstance(self.store, LockingOAuthStore):
            async with self.store.lock(self.key):
                yield
        else:
            yield

    async def _refresh_single_flight(self) -> str:
        logger.debug("access token for key %r needs a refresh; waiting for the lock", self.key)
        async with self._task_lock, self._store_lock():
            # Read again under the lock: another task or process may have refreshed already.
            state = await self._load()
            tokens = self._require_tokens(state)
            if self._usable(tokens):
                return tokens.access_token.get_secret_value()
            new_tokens = await self._refresh(state, tokens)
            await self.store.set(self.key, state.model_copy(update={"tokens": new_tokens}))
            # Rejected tokens are all older than this one and will not be handed out again.
            self._rejected.clear()
            return new_tokens.access_token.get_secret_value()

    def _token_endpoint(self, state: OAuthState) -> str:
        if state.token_endpoint:
            return state.token_endpoint
        base = state.server_url or self.server_url
        if base is None:
            raise OAuthLoginRequiredError(
                self.key, self.login_command, "the stored state has no token endpoint"
            )
        parsed = urlparse(base)
        return urljoin(f"{parsed.scheme}://{parsed.netloc}", "/token")

    async def _refresh(self, state: OAuthState, tokens: StoredTokens) -> StoredTokens:
        if tokens.refresh_token is None:
            raise OAuthLoginRequiredError(
                self.key,
                self.login_command,
                "the access token expired and the server issued no refresh token",
            )
        if state.client is None:
            raise OAuthLoginRequiredError(
                self.key, self.login_command, "no registered OAuth client is stored"
            )
        url = self._token_endpoint(state)
        data = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token.get_secret_value(),
        }
        if state.resource:
            data["resource"] = state.resource  # RFC 8707: keep the token bound to the server
        logger.debug("refreshing OAuth access token for key %r at %s", self.key, url)
        self.refresh_count += 1
        issued_at = time.time()
        try:
            response = await self._post_as_client(state, url, data)
        except httpx2.HTTPError as exc:
            raise self._refresh_error(
                f"token refresh for {self.key!r} at {url} failed: {type(exc).__name__}; "
                "the stored tokens are unchanged, try again"
            ) from None
        return self._handle_response(response, url, tokens, issued_at)

    def _refresh_error(self, message: str) -> OAuthRefreshError:
        error = OAuthRefreshError(message)
        error.login_command = self.login_command  # what to run if it keeps failing
        return error

    async def _post_as_client(
        self, state: OAuthState, url: str, data: dict[str, str]
    ) -> httpx2.Response:
        """POST a form to an authorization server endpoint, authenticated as the registered
        client the way its token endpoint expects (none / client_secret_basic / _post)."""
        assert state.client is not None
        server_url = state.server_url or self.server_url or url
        # A stored endpoint came from an authorization server's metadata: held to the same
        # rules as at login (a store written before the policy, or edited, is checked too).
        await self.url_policy.check(url, server_url=server_url)
        # Client authentication is the SDK's.
        context = OAuthContext(
            server_url=server_url,
            client_metadata=OAuthClientMetadata(
                redirect_uris=[AnyUrl(state.redirect_url or "http://127.0.0.1/callback")]
            ),
            storage=StoreTokenStorage(self.store, self.key, server_url),
            redirect_handler=None,
            callback_handler=None,
            client_info=state.client.to_sdk(),
        )
        form, headers = context.prepare_token_auth(
            {**data, "client_id": state.client.client_id},
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        if self._http_client is not None:
            return await self._http_client.post(url, data=form, headers=headers)
        async with httpx2.AsyncClient(timeout=30.0) as client:
            return await client.post(url, data=form, headers=headers)

    def _handle_response(
        self, response: httpx2.Response, url: str, old: StoredTokens, issued_at: float
    ) -> StoredTokens:
        if response.status_code == 200:
            try:
                token = OAuthToken.model_validate_json(response.content)
            except ValidationError:
                raise self._refresh_error(
                    f"token refresh for {self.key!r} at {url} returned an invalid token response"
                ) from None
            new = StoredTokens.from_oauth_token(token, now=issued_at)
            # RFC 6749 §6: an omitted refresh_token/scope means "unchanged".
            update: dict[str, object] = {}
            if new.refresh_token is None:
                update["refresh_token"] = old.refresh_token
            if new.scope is None:
                update["scope"] = old.scope
            logger.debug("refreshed OAuth access token for key %r", self.key)
            return new.model_copy(update=update) if update else new
        error, description = _oauth_error(response)
        if response.status_code in (400, 401, 403) and (error in _REJECTED or error is None):
            raise OAuthRefreshRejectedError(
                self.key, self.login_command, error or f"HTTP {response.status_code}", description
            )
        raise self._refresh_error(
            f"token refresh for {self.key!r} at {url} failed with HTTP {response.status_code}"
            f"{f' ({error})' if error else ''}; the stored tokens are unchanged, try again"
        )


def _oauth_error(response: httpx2.Response) -> tuple[str | None, str | None]:
    try:
        body = response.json()
    except ValueError:
        return None, None
    if not isinstance(body, dict):
        return None, None
    error = body.get("error")
    description = body.get("error_description")
    return (
        error if isinstance(error, str) else None,
        description if isinstance(description, str) else None,
    )
