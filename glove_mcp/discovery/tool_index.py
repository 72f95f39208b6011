"""Tools known ahead: list every catalogue server's tools before anyone activates it.

Discovery ranks a server by what its tools do once it knows them (``CatalogueIndex`` reads the
learned-tools store, ``LearnedToolsStore``); a mount learns them when it connects. Before that
first activation, a server is known by its catalogue description alone, and descriptions are
often weak ("GitHub's official MCP server"). ``index_tools`` connects to every catalogue
server it can reach — an open server, one the principal holds a credential for (the
credential issued for that server's URL only, through ``BoundLogin``; never one a catalogue id
points elsewhere now), a stdio server (started, then stopped) — lists its tools and saves them
with the store, which records when (``learned_at``). A server that fails is skipped with one
line; the others go on. Nothing here runs inside a conversation: it is a command
(``glove-mcp servers index``) or a background task.

With a ``LearnedListingsStore`` (every adapter of glove_mcp is one), the server's instructions
are kept too (discovery ranks on them) with the listing's time and the ``ttlMs`` of its
``tools/list`` result; a server whose kept listing is still fresh by that TTL is not contacted
again (state ``"fresh"``) unless ``refresh=True``. A server that gave no TTL is listed on every
run.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from glove_mcp.adapter import (
    LearnedListing,
    LearnedListingsStore,
    LearnedTool,
    LearnedToolsStore,
)
from glove_mcp.auth import bearer
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import connect_mcp
from glove_mcp.discovery.registry_import import missing_inputs
from glove_mcp.errors import (
    GloveMcpError,
    McpAuthExpiredError,
    McpTimeoutError,
    OAuthLoginRequiredError,
)
from glove_mcp.oauth import BoundLogin, OAuthStore
from glove_mcp.resource_keys import DEFAULT_PRINCIPAL

__all__ = [
    "DEFAULT_CONCURRENCY",
    "EntryListing",
    "IndexedServer",
    "entry_login",
    "index_tools",
    "list_entry",
]

logger = logging.getLogger("glove_mcp.discovery")

DEFAULT_CONCURRENCY = 4
"""How many servers ``index_tools`` contacts at once."""


@dataclass(frozen=True)
class IndexedServer:
    """How indexing one server went.

    Attributes:
        id: the catalogue id.
        state: ``"listed"`` (its tools were saved), ``"fresh"`` (not contacted: the kept
            listing is still fresh by the TTL the server gave), ``"needs_login"`` (it wants a
            login the principal does not hold for its URL), or ``"failed"`` (down, too slow,
            not MCP, a command that would not start, the store refused).
        detail: one line: the tool count, until when a fresh listing holds, or why it was
            skipped (never a secret).
        tools: the tools saved, when listed; the tools kept, when fresh.
        instructions: what the server said about how to use it, when listed (or fresh) and
            it said.
        ttl_ms: the listing's TTL (``ttlMs`` of ``tools/list``, milliseconds), when listed
            (or fresh) and the server gave one.
    """

    id: str
    state: Literal["listed", "fresh", "needs_login", "failed"]
    detail: str
    tools: tuple[LearnedTool, ...] = field(default=())
    instructions: str | None = None
    ttl_ms: int | None = None


async def index_tools(
    entries: Iterable[McpCatalogueEntry],
    store: LearnedToolsStore,
    *,
    credentials: OAuthStore | None = None,
    principal: str = DEFAULT_PRINCIPAL,
    login_command: Callable[[str], str] = lambda id: f"glove-mcp auth {id}",
    timeout: float = 15.0,  # noqa: ASYNC109 - per server, not for the whole run
    concurrency: int = DEFAULT_CONCURRENCY,
    report: Callable[[IndexedServer], None] | None = None,
    refresh: bool = False,
) -> list[IndexedServer]:
    """List the tools of every catalogue server that can be reached and save them with
    ``store``, so discovery ranks on them before the first activation.

    With a ``LearnedListingsStore``, each server's instructions and the listing's TTL are
    saved with its tools, and a server whose kept listing is still fresh by its TTL is not
    contacted (state ``"fresh"``) unless ``refresh``. With a plain ``LearnedToolsStore``,
    only the tools are kept and every server is listed.

    Args:
        entries: the catalogue (or the part of it to index).
        store: where learned tools live (``SqliteMcpAdapter``, ``PostgresMcpAdapter``, or any
            ``LearnedToolsStore``); the one the agent's mount reads.
        credentials: the OAuth store the principal's logins are in; None sends none.
        principal: whose credentials may be used (each only for the URL it was issued for).
        login_command: the command that logs in to a server id (named in ``detail``).
        timeout: seconds one server may take to connect and list its tools.
        concurrency: how many servers are contacted at once (>= 1).
        report: called with each outcome as it is known (for a progress line).
        refresh: list every server, also those whose kept listing is still fresh.

    Returns:
        One outcome per entry, in catalogue order.

    Raises:
        ValueError: ``concurrency`` below 1 or ``timeout`` not positive.
        TypeError: ``store`` is not a ``LearnedToolsStore``.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an int of at least 1, got {concurrency!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not isinstance(store, LearnedToolsStore):
        raise TypeError(
            f"store must be a LearnedToolsStore (save_learned_tools, get_learned_tools), got "
            f"{type(store).__name__}"
        )
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be a bool, got {type(refresh).__name__}")
    items = list(entries)
    fresh = {} if refresh else await _fresh_listings(store, {e.id for e in items})
    gate = asyncio.Semaphore(concurrency)

    async def one(entry: McpCatalogueEntry) -> IndexedServer:
        if entry.id in fresh:
            outcome = _still_fresh(entry.id, *fresh[entry.id])
        else:
            async with gate:
                outcome = await _index_one(
                    entry, store, credentials, principal, login_command(entry.id), timeout
                )
        if outcome.state not in ("listed", "fresh"):
            logger.info("servers index: %s skipped: %s", entry.id, outcome.detail)
        if report is not None:
            report(outcome)
        return outcome

    return list(await asyncio.gather(*(one(entry) for entry in items)))


async def _fresh_listings(
    store: LearnedToolsStore, ids: set[str]
) -> dict[str, tuple[LearnedListing, list[LearnedTool]]]:
    """The kept listings of ``ids`` that are still fresh by their TTL, with their tools."""
    if not isinstance(store, LearnedListingsStore):
        return {}
    try:
        listings = await store.get_learned_listings()
        now = datetime.now(UTC)
        fresh = {id: x for id, x in listings.items() if id in ids and x.is_fresh(now)}
        tools = await store.get_learned_tools() if fresh else {}
    except Exception as exc:  # nothing known to be fresh: every server is listed
        logger.warning("servers index: the kept listings could not be read: %s", exc)
        return {}
    return {id: (listing, tools.get(id, [])) for id, listing in fresh.items()}


def _still_fresh(id: str, listing: LearnedListing, tools: Sequence[LearnedTool]) -> IndexedServer:
    until = listing.fresh_until()
    assert until is not None  # fresh means it has a TTL
    count = len(tools)
    return IndexedServer(
        id,
        "fresh",
        f"{count} tool{'s' if count != 1 else ''} kept, fresh until "
        f"{until.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC",
        tuple(tools),
        listing.instructions or None,
        listing.ttl_ms,
    )


@dataclass(frozen=True)
class EntryListing:
    """What ``list_entry`` read of a server.

    Attributes:
        tools: its ``tools/list``, whole.
        instructions: what it said about how to use it, if anything.
        ttl_ms: how long its tool list stays fresh, when it said.
    """

    tools: list[Any]
    instructions: str | None
    ttl_ms: int | None


async def entry_login(
    entry: McpCatalogueEntry,
    credentials: OAuthStore,
    login_hint: str,
    principal: str = DEFAULT_PRINCIPAL,
) -> Any:
    """The principal's login for ``entry``, as an ``httpx2.Auth``, when ``credentials`` hold one
    issued for the entry's URL (refreshed when needed; never one a catalogue id points
    elsewhere now), else None (and None for a stdio server)."""
    if not entry.url:
        return None
    login = BoundLogin(credentials, principal, entry.id, entry.url, login_hint)
    return bearer(login) if await login.bound_state() is not None else None


async def list_entry(
    entry: McpCatalogueEntry,
    *,
    auth: Any,
    timeout: float,  # noqa: ASYNC109 - how long to wait for the connection
) -> EntryListing:
    """Connect to ``entry``'s server over its transport and protocol, with ``auth`` (see
    ``entry_login``), and list its tools.

    Raises:
        McpAuthExpiredError | OAuthLoginRequiredError: it wants a login it was not given.
        McpTimeoutError, McpConnectionError and the other ``GloveMcpError``s of a connection.
    """
    async with await connect_mcp(
        entry.id,
        entry.url,
        auth=auth,
        command=entry.command or None,
        env=entry.env or None,
        protocol=entry.protocol,
        connect_timeout=timeout,
    ) as conn:
        return EntryListing(list(await conn.list_tools()), conn.instructions, conn.tools_ttl_ms)


async def _index_one(
    entry: McpCatalogueEntry,
    store: LearnedToolsStore,
    credentials: OAuthStore | None,
    principal: str,
    login_hint: str,
    timeout: float,  # noqa: ASYNC109
) -> IndexedServer:
    lacking = missing_inputs(entry, os.environ)
    if lacking:  # an imported server not set up yet: starting it would only fail
        return IndexedServer(entry.id, "failed", f"not set up yet: {'; '.join(lacking)}")
    auth = await entry_login(entry, credentials, login_hint, principal) if credentials else None
    try:
        async with asyncio.timeout(timeout):
            found = await list_entry(entry, auth=auth, timeout=timeout)
        listed, instructions, ttl_ms = found.tools, found.instructions, found.ttl_ms
    except (McpAuthExpiredError, OAuthLoginRequiredError):
        if auth is None:
            return IndexedServer(entry.id, "needs_login", f"it needs a login: run {login_hint}")
        return IndexedServer(
            entry.id, "needs_login", f"its tokens no longer work: run {login_hint}"
        )
    except (TimeoutError, McpTimeoutError):
        return IndexedServer(entry.id, "failed", f"no answer within {timeout:g} s")
    except GloveMcpError as exc:
        return IndexedServer(entry.id, "failed", _one_line(str(exc)))
    except Exception as exc:  # one bad server must not stop the others
        return IndexedServer(entry.id, "failed", _one_line(f"{type(exc).__name__}: {exc}"))
    excluded = set(entry.exclude_tools)
    tools = _learned([(t.name, t.description or "") for t in listed if t.name not in excluded])
    try:
        if isinstance(store, LearnedListingsStore):
            await store.save_learned_listing(
                entry.id, tools, instructions=instructions, ttl_ms=ttl_ms
            )
        else:
            await store.save_learned_tools(entry.id, tools)
    except Exception as exc:
        return IndexedServer(entry.id, "failed", _one_line(f"its tools could not be saved ({exc})"))
    count = len(tools)
    return IndexedServer(
        entry.id,
        "listed",
        f"{count} tool{'s' if count != 1 else ''}",
        tuple(tools),
        instructions or None,
        ttl_ms,
    )


def _learned(pairs: Sequence[tuple[str, str]]) -> list[LearnedTool]:
    # The first paragraph: what a tool is, not every option it takes.
    return [LearnedTool(name, text.strip().split("\n\n", 1)[0]) for name, text in pairs if name]


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."
