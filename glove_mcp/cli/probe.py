"""What a catalogue server needs before ``glove-mcp auth`` starts a login: nothing (an open
HTTP server, a stdio server), an OAuth login, or credentials OAuth cannot get (a server that
answers 401 but publishes no OAuth metadata), or it cannot be reached at all.

Asking first means that ``auth`` on a server that needs no login writes nothing, and that an
unreachable server or one without OAuth gets one plain line instead of a half-started login.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import connect_mcp
from glove_mcp.errors import (
    GloveMcpError,
    McpAuthExpiredError,
    McpConnectionError,
    McpServerUnavailableError,
    McpTimeoutError,
)

__all__ = ["Access", "Reach", "probe", "stdio_problem"]

Access = Literal["open", "oauth", "no_oauth", "unreachable", "stdio"]
"""What a server needs: nothing (``open``, ``stdio``), an OAuth login (``oauth``),
credentials OAuth cannot obtain (``no_oauth``); or it did not answer (``unreachable``)."""


@dataclass(frozen=True)
class Reach:
    """The outcome of asking a server without credentials.

    Attributes:
        access: what it needs (see ``Access``).
        detail: one line on why (the connection error, the tool count of an open server).
    """

    access: Access
    detail: str = ""


def stdio_problem(entry: McpCatalogueEntry) -> str | None:
    """Why a stdio entry's command cannot start here (its program is not found), or None."""
    if not entry.command:
        return None
    program = entry.command[0]
    if shutil.which(program) is None:
        return f"command {program!r} was not found (is it installed and on PATH?)"
    return None


async def probe(
    entry: McpCatalogueEntry,
    timeout: float = 15.0,  # noqa: ASYNC109
    *,
    allow_private: bool = False,
) -> Reach:
    """Ask ``entry``'s server, without credentials, what it needs (``allow_private``: the
    metadata its 401 names is held to ``UrlPolicy(allow_private=...)``, as the login is)."""
    if entry.command:
        return Reach("stdio", stdio_problem(entry) or "")
    try:
        async with await connect_mcp(entry.id, entry.url, connect_timeout=timeout) as conn:
            count = len(await conn.list_tools())
    except McpAuthExpiredError:
        if await _advertises_oauth(entry.url, timeout, allow_private):
            return Reach("oauth")
        return Reach(
            "no_oauth",
            "it answers 401 but publishes no OAuth metadata (no "
            "/.well-known/oauth-protected-resource or oauth-authorization-server)",
        )
    except McpServerUnavailableError as exc:
        return Reach("unreachable", f"cannot reach {entry.url} ({exc.reason})")
    except McpTimeoutError:
        return Reach("unreachable", f"{entry.url} did not answer within {timeout:g} s")
    except McpConnectionError as exc:
        return Reach("unreachable", str(exc))
    except GloveMcpError as exc:
        return Reach("unreachable", f"it answered, but not as an MCP server: {exc}")
    return Reach("open", f"{count} tools")


async def _advertises_oauth(url: str, timeout: float, allow_private: bool) -> bool:  # noqa: ASYNC109
    """Whether the server names protected-resource metadata in its 401's ``WWW-Authenticate``
    (``resource_metadata=``, the MCP authorization spec's first place to look), or its origin
    publishes protected-resource or authorization-server metadata (RFC 9728, RFC 8414,
    OpenID discovery) at a well-known path."""
    import httpx2

    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    candidates = [
        f"{origin}/.well-known/oauth-protected-resource{path}",
        f"{origin}/.well-known/oauth-protected-resource",
        f"{origin}/.well-known/oauth-authorization-server",
        f"{origin}/.well-known/openid-configuration",
    ]
    async with httpx2.AsyncClient(timeout=timeout) as client:
        named = await _named_metadata(client, url)
        if named and await _allowed(named, url, allow_private):
            candidates.insert(0, named)
        for candidate in candidates:
            try:
                response = await client.get(candidate)
            except httpx2.HTTPError:
                continue
            if response.status_code == 200 and _is_json_object(response.content):
                return True
    return False


async def _named_metadata(client: Any, url: str) -> str | None:
    """The ``resource_metadata`` URL of the server's 401 challenge, if it gives one."""
    import httpx2

    ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    try:
        response = await client.post(
            url, json=ping, headers={"Accept": "application/json, text/event-stream"}
        )
    except httpx2.HTTPError:
        return None
    found = _RESOURCE_METADATA.search(response.headers.get("www-authenticate", ""))
    return found.group(1) if found else None


async def _allowed(named: str, server_url: str, allow_private: bool) -> bool:
    """Whether the login's URL policy would fetch the metadata the 401 names (the probe
    must not be the way round it)."""
    from glove_mcp.oauth.url_policy import OAuthUrlRefusedError, UrlPolicy

    try:
        policy = UrlPolicy(allow_private=allow_private)
        await policy.check(named, server_url=server_url, role="metadata")
    except OAuthUrlRefusedError:
        return False
    return True


_RESOURCE_METADATA = re.compile(r'resource_metadata="?([^",\s]+)"?')


def _is_json_object(body: bytes) -> bool:
    import json

    try:
        return isinstance(json.loads(body), dict)
    except ValueError:
        return False
