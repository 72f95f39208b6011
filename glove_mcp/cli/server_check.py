"""Contacting one catalogue server as the agent would (its stored tokens, if any; a stdio
server started) and listing its tools: ``servers test`` and ``status --check``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.discovery.tool_index import entry_login, list_entry
from glove_mcp.errors import (
    GloveMcpError,
    McpAuthExpiredError,
    McpConnectionError,
    McpServerUnavailableError,
    McpTimeoutError,
    OAuthLoginRequiredError,
)
from glove_mcp.oauth import OAuthStore

__all__ = ["Outcome", "Tried", "try_server"]

Outcome = Literal["ok", "needs_login", "login_expired", "unreachable", "failed"]
"""How contacting a server went: it answered (``ok``); it wants a login it has none for
(``needs_login``) or its tokens no longer work (``login_expired``); it did not answer
(``unreachable``); anything else (``failed``: a stdio server that would not start, an
answer that is no MCP)."""


@dataclass(frozen=True)
class Tried:
    """The outcome of ``try_server``.

    Attributes:
        state: see ``Outcome``.
        detail: one line on why (the tool count, the error).
        tools: the names of the server's tools, when it answered.
    """

    state: Outcome
    detail: str = ""
    tools: list[str] = field(default_factory=list)


async def try_server(
    entry: McpCatalogueEntry,
    store: OAuthStore | None,
    login_hint: str,
    timeout: float = 15.0,  # noqa: ASYNC109 - how long to wait for the connection
) -> Tried:
    """Connect to ``entry``'s server (with the tokens ``store`` holds for it, refreshed if
    needed; none for a stdio server) and list its tools.

    Args:
        entry: the catalogue entry.
        store: the command's token store, or None to send no credentials.
        login_hint: the command that logs in to this server, named when a login is needed.
        timeout: seconds to wait for the connection.
    """
    # Only a credential issued for this URL is sent (never one a catalogue id points
    # elsewhere now): the principal is the command's, ``default``.
    auth = await entry_login(entry, store, login_hint) if store is not None else None
    try:
        tools = [tool.name for tool in (await list_entry(entry, auth=auth, timeout=timeout)).tools]
    except (McpAuthExpiredError, OAuthLoginRequiredError):
        if auth is None:
            return Tried("needs_login", f"it needs a login: run {login_hint}")
        return Tried("login_expired", f"its tokens no longer work: run {login_hint}")
    except McpServerUnavailableError as exc:
        if entry.command:
            return Tried("failed", str(exc))
        return Tried("unreachable", f"cannot reach {entry.url} ({exc.reason})")
    except McpTimeoutError:
        return Tried("unreachable", f"no answer within {timeout:g} s")
    except McpConnectionError as exc:
        return Tried("failed" if entry.command else "unreachable", str(exc))
    except GloveMcpError as exc:
        return Tried("failed", str(exc))
    count = len(tools)
    return Tried("ok", f"{count} tool{'s' if count != 1 else ''}", tools)
