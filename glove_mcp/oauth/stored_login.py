"""Tokens from an earlier login, for an agent: a ``TokenSource`` per catalogue server that
reads the store, refreshes when the tokens expire (or after a 401) and sends nothing while
nobody has logged in yet, so the server's 401 lets discovery name the login command instead
of every request failing with a warning.

Example:
    >>> tokens = stored_logins(FsOAuthStore(token_file()), entries)
    >>> adapter = SqliteMcpAdapter("chat.db", "s1", tokens=tokens)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.token_source import OAuthTokenSource

__all__ = ["StoredLogin", "stored_logins"]


class StoredLogin:
    """A server's OAuth tokens from ``store`` (a ``glove_mcp.auth.TokenSource``).

    Args:
        store: where the login saved the tokens.
        entry: the server (its id keys the store; its url is the token audience).
        login_command: what a person runs to log in, named when a refresh is refused.
    """

    def __init__(self, store: OAuthStore, entry: McpCatalogueEntry, login_command: str) -> None:
        self._store = store
        self._id = entry.id
        self._source = OAuthTokenSource(store, entry.id, entry.url, login_command=login_command)

    async def access_token(self, *, force_refresh: bool = False) -> str | None:
        """The access token, refreshed first when it expired or ``force_refresh`` (a 401);
        None while the store holds no tokens for the server."""
        state = await self._store.get(self._id)
        if state is None or state.tokens is None:
            # No login (or one that never finished): send nothing rather than fail every
            # request with a warning; the server's 401 makes discovery name the login.
            return None
        return await self._source.access_token(force_refresh=force_refresh)

    def __repr__(self) -> str:
        return f"<StoredLogin {self._id!r} (tokens hidden)>"


def stored_logins(
    store: OAuthStore,
    entries: Sequence[McpCatalogueEntry],
    login_command: Callable[[str], str] = lambda id: f"glove-mcp auth {id}",
) -> dict[str, StoredLogin]:
    """A ``StoredLogin`` per HTTP server of ``entries``, for an adapter's ``tokens=``: one
    source per server, shared by every conversation, so refreshes stay single-flight.

    Args:
        store: the token store.
        entries: the catalogue.
        login_command: server id -> the command that logs in to it.
    """
    return {e.id: StoredLogin(store, e, login_command(e.id)) for e in entries if e.url}
