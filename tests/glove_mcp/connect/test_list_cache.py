"""List caching (``ttlMs``/``cacheScope``) against real servers on loopback: what is shared
across the connections of a pool, what stays with one connection, and what a ``list_changed``,
an expired ttl, an older protocol or a refused credential do to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

import pytest
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer

from glove_mcp import bearer, connect_mcp
from glove_mcp.connect import ListCache, McpClientPool, McpServerConnection
from glove_mcp.connect.mcp_server_requests import ChangeKind, ServerRequests
from glove_mcp.errors import McpAuthExpiredError
from glove_mcp.testing import McpTestServer, ServerControl, build_paged_server
from glove_mcp.testing.servers import build_notes_server


class _Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _notes(ttl_ms: int, scope: Literal["public", "private"]) -> MCPServer:
    hint = CacheHint(ttl_ms=ttl_ms, scope=scope)
    return build_notes_server(
        cache_hints={"tools/list": hint, "resources/list": hint, "resources/templates/list": hint}
    )


def _changing(ttl_ms: int) -> MCPServer:
    """Tools listed public for ``ttl_ms``; calling ``grow`` adds ``extra`` and says so."""
    server = MCPServer(
        "changing",
        log_level="WARNING",
        cache_hints={"tools/list": CacheHint(ttl_ms=ttl_ms, scope="public")},
    )

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool extra."""

        def extra(word: str) -> str:
            """Echo a word."""
            return word

        server.add_tool(extra)
        await ctx.notify_tools_changed()
        if ctx.protocol_version != "2026-07-28":
            await ctx.session.send_tool_list_changed()
        return "grown"

    return server


@pytest.fixture
async def public_notes() -> AsyncIterator[McpTestServer]:
    async with McpTestServer(_notes(60_000, "public")) as server:
        yield server


async def _names(pool: McpClientPool, url: str, **kwargs: object) -> list[str]:
    async with await connect_mcp("notes", url, pool=pool, **kwargs) as conn:  # type: ignore[arg-type]
        return sorted(t.name for t in await conn.list_tools())


async def test_public_lists_serve_every_connection_of_the_pool(
    public_notes: McpTestServer,
) -> None:
    async with McpClientPool() as pool:
        first = await _names(pool, public_notes.url)
        second = await _names(pool, public_notes.url)
    assert first == second
    assert public_notes.control.methods["tools/list"] == 1
    assert pool.list_cache.stats.hits == 1


async def test_a_cached_listing_serves_the_sessions_own_checks(
    public_notes: McpTestServer,
) -> None:
    # A call's structured result is checked against the tool's output schema, which the SDK
    # session learns from a listing: a cached page must teach it too, or it lists again.
    async with McpClientPool() as pool:
        for _ in range(2):
            async with await connect_mcp("notes", public_notes.url, pool=pool) as conn:
                await conn.list_tools()
                result = await conn.call_tool("read_page", {"page_id": "p1"})
                assert result.structured_content is not None
    assert public_notes.control.methods["tools/list"] == 1


async def test_a_disabled_cache_lists_every_time(public_notes: McpTestServer) -> None:
    async with McpClientPool(list_cache=ListCache(enabled=False)) as pool:
        await _names(pool, public_notes.url)
        await _names(pool, public_notes.url)
    assert public_notes.control.methods["tools/list"] == 2


async def test_pools_do_not_share(public_notes: McpTestServer) -> None:
    async with McpClientPool() as one, McpClientPool() as other:
        await _names(one, public_notes.url)
        await _names(other, public_notes.url)
    assert public_notes.control.methods["tools/list"] == 2


async def test_private_lists_stay_with_their_connection() -> None:
    async with McpTestServer(_notes(60_000, "private")) as server, McpClientPool() as pool:
        async with await connect_mcp("notes", server.url, pool=pool) as conn:
            await conn.list_tools()
            await conn.list_tools()
        assert server.control.methods["tools/list"] == 1
        # Another conversation (another connection), same pool and server: not shared.
        await _names(pool, server.url)
    assert server.control.methods["tools/list"] == 2


async def test_a_list_is_asked_again_once_its_ttl_has_passed() -> None:
    clock = _Clock()
    async with (
        McpTestServer(_notes(5_000, "public")) as server,
        McpClientPool(list_cache=ListCache(clock=clock)) as pool,
    ):
        await _names(pool, server.url)
        clock.now += 4.9
        await _names(pool, server.url)
        assert server.control.methods["tools/list"] == 1
        clock.now += 0.2
        await _names(pool, server.url)
    assert server.control.methods["tools/list"] == 2


async def test_a_zero_ttl_is_never_cached() -> None:
    async with McpTestServer(_notes(0, "public")) as server, McpClientPool() as pool:
        await _names(pool, server.url)
        await _names(pool, server.url)
    assert server.control.methods["tools/list"] == 2
    assert pool.list_cache.stats.stored == 0


async def test_servers_on_the_older_revision_are_not_cached() -> None:
    control = ServerControl(legacy_only=True)
    async with (
        McpTestServer(_notes(60_000, "public"), control=control) as server,
        McpClientPool() as pool,
    ):
        await _names(pool, server.url)
        await _names(pool, server.url)
    # Legacy sessions are not peeked per request past the first; count what was stored.
    assert pool.list_cache.stats.stored == 0
    assert pool.list_cache.stats.hits == 0


async def test_clients_declaring_other_capabilities_do_not_share(
    public_notes: McpTestServer,
) -> None:
    async with McpClientPool() as pool:
        await _names(pool, public_notes.url)
        async with McpServerConnection(
            "notes",
            public_notes.url,
            pool=pool,
            requests=ServerRequests(roots=[]),
        ) as conn:
            await conn.list_tools()
    assert public_notes.control.methods["tools/list"] == 2


async def test_a_refused_credential_gets_no_cached_list() -> None:
    async with (
        McpTestServer(_notes(60_000, "public"), tokens={"good"}) as server,
        McpClientPool() as pool,
    ):
        assert await _names(pool, server.url, auth=bearer("good"))
        with pytest.raises(McpAuthExpiredError):
            await _names(pool, server.url, auth=bearer("stolen"))
    assert pool.list_cache.stats.hits == 0


async def test_list_changed_makes_the_cached_list_stale_for_every_connection() -> None:
    heard = asyncio.Event()

    async def changed(kind: ChangeKind) -> None:
        heard.set()

    async with (
        McpTestServer(_changing(600_000)) as server,
        McpClientPool() as pool,
        McpServerConnection(
            "changing",
            server.url,
            pool=pool,
            requests=ServerRequests(on_list_changed=changed),
        ) as listening,
    ):
        assert [t.name for t in await listening.list_tools()] == ["grow"]
        await listening.call_tool("grow", {})
        await asyncio.wait_for(heard.wait(), 10)
        # Another connection of the pool (another conversation) sees the change too.
        async with await connect_mcp("changing", server.url, pool=pool) as other:
            names = sorted(t.name for t in await other.list_tools())
    assert names == ["extra", "grow"]
    assert server.control.methods["tools/list"] == 2
    assert pool.list_cache.stats.invalidations == 1


async def test_each_page_is_cached_by_its_cursor() -> None:
    cursors: list[str | None] = []
    paged = build_paged_server(tool_count=25, page_size=10, cursors=cursors)
    paged.cache_hints = {"tools/list": CacheHint(ttl_ms=60_000, scope="public")}
    async with McpTestServer(paged) as server, McpClientPool() as pool:
        first = await _names(pool, server.url)
        second = await _names(pool, server.url)
    assert first == second and len(first) == 25
    assert cursors == [None, "10", "20"]


def test_max_entries_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_entries must be at least 1, got 0"):
        ListCache(max_entries=0)


async def test_a_connection_tells_its_last_listings_ttl(public_notes: McpTestServer) -> None:
    async with McpTestServer(build_notes_server()) as plain, McpClientPool() as pool:
        async with await connect_mcp("notes", public_notes.url, pool=pool) as conn:
            before = conn.tools_ttl_ms  # nothing listed yet
            await conn.list_tools()
            listed = conn.tools_ttl_ms
            await conn.list_tools()  # from the cache: the ttlMs it arrived with
            assert (before, listed, conn.tools_ttl_ms) == (None, 60_000, 60_000)
        async with await connect_mcp("plain", plain.url, pool=pool) as conn:
            await conn.list_tools()
            assert conn.tools_ttl_ms is None  # no ttlMs (0): none
