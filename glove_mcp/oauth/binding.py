"""Credentials per principal, bound to the resource they were issued for.

A store key is ``credential_key(principal, server_url)``: the principal's name and the
server's RFC 8707 resource (its canonical URL). A catalogue id is only a name for a server;
the credential is found through the server's URL, so when an entry is pointed at another URL
its old credential is simply not found — not sent, not refreshed. The state also records the
issuer that issued it, and its refresh goes to that issuer's token endpoint only.

States written before this rule (keyed by catalogue id) are migrated on first use for the
``default`` principal when the server URL they carry names the same resource; one without a
URL, or with another URL, is never used (the server needs a new login).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import httpx2

from glove_mcp.oauth.state import OAuthState
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.token_source import OAuthTokenSource
from glove_mcp.oauth.url_policy import UrlPolicy
from glove_mcp.resource_keys import (
    DEFAULT_PRINCIPAL,
    canonical_resource,
    credential_key,
    same_resource,
)

__all__ = [
    "DEFAULT_PRINCIPAL",
    "BoundLogin",
    "LoginCheck",
    "canonical_resource",
    "credential_key",
    "same_resource",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoginCheck:
    """What a principal holds for one server.

    Attributes:
        state: ``"connected"`` (tokens issued for this server's resource) or
            ``"needs_login"``.
        reason: why a login is needed (``None`` when connected); never holds a secret.
        expires_at: the access token's expiry (Unix time), when connected and known.
        scopes: the granted scopes, when connected.
        refreshable: whether a refresh token is held.
        stale: a login is stored under this server's id that is not for its URL (the entry
            was pointed elsewhere, or the login records no URL): it needs a *new* login.
    """

    state: Literal["connected", "needs_login"]
    reason: str | None = None
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()
    refreshable: bool = False
    stale: bool = False


class BoundLogin:
    """A principal's OAuth credential for one server, handed out only for that server's URL.

    A ``TokenSource`` for ``adapter_auth`` / ``MemoryMcpAdapter(tokens=)``: ``access_token``
    returns ``None`` (no header is sent; the server's 401 makes discovery name
    ``login_command``) until the principal logged in to *this* URL, and refreshes silently
    afterwards.

    Args:
        store: the token store.
        principal: whose credential.
        server_id: the catalogue id (for messages, and the key of states written before
            credentials were bound to resources).
        server_url: the server's URL now; only a credential issued for it is used.
        login_command: the command or route that logs in (named in errors).
        http_client: for token refreshes (not closed here).
        url_policy: what the token and revocation endpoints are checked against
            (``UrlPolicy()`` by default).
    """

    def __init__(
        self,
        store: OAuthStore,
        principal: str,
        server_id: str,
        server_url: str,
        login_command: str,
        *,
        http_client: httpx2.AsyncClient | None = None,
        url_policy: UrlPolicy | None = None,
    ) -> None:
        self.store = store
        self.principal = principal
        self.server_id = server_id
        self.server_url = server_url
        self.login_command = login_command
        self.key = credential_key(principal, server_url)
        self._source = OAuthTokenSource(
            store,
            self.key,
            server_url,
            login_command=login_command,
            http_client=http_client,
            url_policy=url_policy,
        )

    def __repr__(self) -> str:
        return f"BoundLogin(principal={self.principal!r}, server={self.server_id!r})"

    @property
    def source(self) -> OAuthTokenSource:
        """The token source of the bound key (refresh, revoke)."""
        return self._source

    async def access_token(self, *, force_refresh: bool = False) -> str | None:
        """The access token for this server, or ``None`` when there is no credential issued
        for its URL (then nothing is sent and nothing is refreshed)."""
        if await self.bound_state() is None:
            return None
        return await self._source.access_token(force_refresh=force_refresh)

    async def bound_state(self) -> OAuthState | None:
        """The stored state with tokens issued for this server's URL, or ``None``."""
        state = await self.store.get(self.key)
        if state is None and self.principal == DEFAULT_PRINCIPAL:
            state = await self._migrate()
        if state is None or state.tokens is None:
            return None
        if not same_resource(state.server_url, self.server_url):
            return None  # a state edited by hand or by an older writer: never guessed
        return state

    async def check(self) -> LoginCheck:
        """Whether the principal is connected to this server, and if not, why."""
        state = await self.bound_state()
        if state is not None and state.tokens is not None:
            tokens = state.tokens
            return LoginCheck(
                "connected",
                expires_at=tokens.expires_at,
                scopes=tuple((tokens.scope or "").split()),
                refreshable=tokens.refresh_token is not None,
            )
        legacy = (
            await self.store.get(self.server_id) if self.principal == DEFAULT_PRINCIPAL else None
        )
        if legacy is not None and legacy.tokens is not None:
            if legacy.server_url is None:
                reason = "the stored login records no server URL, so it is not used"
            else:
                reason = (
                    f"the stored login was issued for {legacy.server_url}, not {self.server_url}"
                )
            return LoginCheck("needs_login", reason, stale=True)
        return LoginCheck("needs_login", "no login for this server")

    async def forget(self) -> None:
        """Delete the principal's credential for this server (revoke first to end it there)."""
        await self.store.delete(self.key)

    async def _migrate(self) -> OAuthState | None:
        """Move a state stored under the catalogue id (before keys named resources) to the
        bound key, when the URL it carries is this server's."""
        old = await self.store.get(self.server_id)
        if old is None or old.tokens is None or not same_resource(old.server_url, self.server_url):
            return None
        await self.store.set(self.key, old)
        await self.store.delete(self.server_id)
        logger.info("moved the login of %r to its resource-bound key", self.server_id)
        return old
