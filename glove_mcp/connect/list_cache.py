"""List caching (protocol revision 2026-07-28, SEP-2549): list results carry ``ttlMs`` and
``cacheScope``, and a client need not ask again while a result is fresh.

What is cached: every page of ``tools/list``, ``prompts/list``, ``resources/list`` and
``resources/templates/list`` whose ``ttlMs`` is above 0, for that many milliseconds from its
arrival. Results of servers on 2025-11-25 carry no hints and are never cached (the SDK drops
hints a revision does not define).

Who may reuse a cached page, by its ``cacheScope``:

- ``"public"`` — every connection that sends through the same ``McpClientPool`` (so every
  mount and conversation the pool serves, whichever principal it acts for), provided it
  speaks to the same server (URL, or stdio command and environment), on the same protocol
  revision, declaring the same client capabilities (servers may list tools only to clients
  that can answer elicitation or sampling).
- ``"private"`` — only the connection that received it. The spec allows reuse within one
  authorization context; a connection is the narrowest such context we can be sure of, so
  two conversations never share a private page, even for the same person.

A lookup happens inside an open session, after the server accepted the credentials: a public
page is never handed to a client the server would refuse. A ``list_changed`` from the server
(heard by any connection to it) makes every cached page of that list stale, public and private,
at once. The store is the SDK's LRU-bounded ``InMemoryResponseCacheStore`` (or any
``ResponseCacheStore``); freshness is measured on a monotonic clock.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import mcp_types as types
from mcp.client.caching import (
    CacheEntry,
    CacheKey,
    InMemoryResponseCacheStore,
    ResponseCacheStore,
)

__all__ = [
    "CACHEABLE_LISTS",
    "DEFAULT_MAX_CACHED_PAGES",
    "MAX_LIST_TTL",
    "ListCache",
    "ListCacheStats",
    "server_identity",
]

CACHEABLE_LISTS: frozenset[str] = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)
"""The list methods whose pages are cached."""
DEFAULT_MAX_CACHED_PAGES = 1024
"""Pages an in-memory ``ListCache`` keeps before dropping the least recently used."""
MAX_LIST_TTL = 24 * 60 * 60.0
"""Seconds: the longest a page stays fresh, whatever ``ttlMs`` says (a day)."""

_CHANGED: dict[str, tuple[str, ...]] = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list"),
}


@dataclass
class ListCacheStats:
    """What a ``ListCache`` did, for benchmarks and diagnostics.

    Attributes:
        hits: pages served from the cache (list requests not sent).
        misses: lookups that found nothing fresh (the request was sent).
        stored: pages kept (``ttlMs`` above 0).
        invalidations: ``list_changed`` notifications that made pages stale.
    """

    hits: int = 0
    misses: int = 0
    stored: int = 0
    invalidations: int = 0


def server_identity(
    url: str, command: Iterable[str] | None, env: dict[str, str] | None, capabilities: str
) -> str:
    """The part of a cache key that names the server and how the client met it.

    Args:
        url: the Streamable HTTP endpoint ("" for stdio).
        command: the stdio command (None for HTTP).
        env: the stdio server's environment; hashed, never kept (it may hold secrets).
        capabilities: what the client declares, as a short stable string.

    Returns:
        An opaque string; equal for two connections exactly when a public page of one may
        serve the other.
    """
    if url:
        base = f"url:{url}"
    else:
        digest = hashlib.sha256()
        for part in command or ():
            digest.update(part.encode() + b"\0")
        digest.update(b"\1")
        for key, value in sorted((env or {}).items()):
            digest.update(key.encode() + b"=" + value.encode() + b"\0")
        base = f"stdio:{digest.hexdigest()}"
    return f"{base}|caps:{capabilities}"


class ListCache:
    """Cached list pages shared by the connections of one ``McpClientPool``.

    Args:
        enabled: False never serves nor keeps anything (every list is asked for).
        store: where pages are kept; an ``InMemoryResponseCacheStore`` of
            ``max_entries`` pages by default.
        max_entries: the default store's size (least recently used pages go first).
        clock: seconds on a monotonic clock; injectable so tests need no sleeping.
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        store: ResponseCacheStore | None = None,
        max_entries: int = DEFAULT_MAX_CACHED_PAGES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"ListCache: max_entries must be at least 1, got {max_entries}")
        self.enabled = enabled
        self._store = (
            store if store is not None else InMemoryResponseCacheStore(max_entries=max_entries)
        )
        self._clock = clock
        # A list_changed bumps the generation of that server's list: older pages become
        # unreachable at once and the store's LRU drops them later.
        self._generations: dict[tuple[str, str], int] = {}
        self._private_ids = itertools.count(1)
        self.stats = ListCacheStats()
        """Counters since creation."""

    def private_partition(self) -> str:
        """A partition no other caller gets: the private pages of one connection."""
        return f"private-{next(self._private_ids)}"

    def _key(
        self, server: str, protocol: str, method: str, cursor: str | None, partition: str
    ) -> CacheKey:
        generation = self._generations.get((_base(server), method), 0)
        return CacheKey(method, cursor or "", f"{server}|{protocol}|g{generation}|{partition}")

    async def get(
        self, server: str, protocol: str, method: str, cursor: str | None, private: str
    ) -> types.Result | None:
        """A fresh page for this request, private first, then public; None if none.

        Args:
            server: ``server_identity(...)`` of the asking connection.
            protocol: the session's protocol revision.
            method: the list method.
            cursor: the page's cursor (None for the first page).
            private: the asking connection's ``private_partition()``.
        """
        if not self.enabled or method not in CACHEABLE_LISTS:
            return None
        now = self._clock()
        for partition in (private, "public"):
            key = self._key(server, protocol, method, cursor, partition)
            entry = await self._store.get(key)
            if entry is None:
                continue
            if entry.expires_at is None or now >= entry.expires_at:
                await self._store.delete(key)
                continue
            if isinstance(entry.value, types.Result):
                self.stats.hits += 1
                return entry.value
        self.stats.misses += 1
        return None

    async def put(
        self,
        server: str,
        protocol: str,
        method: str,
        cursor: str | None,
        private: str,
        result: types.Result,
    ) -> None:
        """Keep a page the server sent, if its hints allow (``ttlMs`` above 0)."""
        if not self.enabled or method not in CACHEABLE_LISTS:
            return
        if not isinstance(result, types.CacheableResult) or result.ttl_ms <= 0:
            return
        scope = result.cache_scope
        partition = "public" if scope == "public" else private
        ttl = min(result.ttl_ms / 1000, MAX_LIST_TTL)
        key = self._key(server, protocol, method, cursor, partition)
        # Pydantic results are never mutated here or by their readers; no copy needed.
        await self._store.set(key, CacheEntry(result, scope, self._clock() + ttl))
        self.stats.stored += 1

    def invalidate(self, server: str, kind: str) -> None:
        """Make every cached page of list ``kind`` (``"tools"``, ``"prompts"`` or
        ``"resources"``) of this server stale, for every connection and protocol."""
        for method in _CHANGED.get(kind, ()):
            key = (_base(server), method)
            self._generations[key] = self._generations.get(key, 0) + 1
        self.stats.invalidations += 1


def _base(server: str) -> str:
    """The server itself, whatever the client declared: a change concerns every client."""
    return server.split("|caps:", 1)[0]
