"""Tokens from an earlier login, for an agent: a ``BoundLogin`` per catalogue server — it
reads the store, refreshes when the tokens expire (or after a 401), sends nothing while
nobody has logged in to *that server's URL* (so the server's 401 lets discovery name the
login command instead of every request failing with a warning), and never sends a token
issued for another URL.

Example:
    >>> tokens = stored_logins(FsOAuthStore(token_file()), entries)
    >>> adapter = SqliteMcpAdapter("chat.db", "s1", tokens=tokens)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.oauth.binding import BoundLogin
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.url_policy import UrlPolicy
from glove_mcp.resource_keys import DEFAULT_PRINCIPAL

__all__ = ["stored_logins"]


def stored_logins(
    store: OAuthStore,
    entries: Sequence[McpCatalogueEntry],
    login_command: Callable[[str], str] = lambda id: f"glove-mcp auth {id}",
    *,
    principal: str = DEFAULT_PRINCIPAL,
    url_policy: UrlPolicy | None = None,
) -> dict[str, BoundLogin]:
    """A ``BoundLogin`` per HTTP server of ``entries``, for an adapter's ``tokens=``: one
    source per server, shared by every conversation, so refreshes stay single-flight.

    Args:
        store: the token store.
        entries: the catalogue.
        login_command: server id -> the command that logs in to it.
        principal: whose logins (``default``: the command's).
        url_policy: what refreshes are checked against (``UrlPolicy()`` by default).
    """
    return {
        e.id: BoundLogin(store, principal, e.id, e.url, login_command(e.id), url_policy=url_policy)
        for e in entries
        if e.url
    }
