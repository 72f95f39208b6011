"""Connections against the local MCP servers over real HTTP: listing, calls, pagination,
exclusion, and the recovery contract (401 refresh, auth_expired, 404 re-init, outages)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator

import pytest

from glove_core import Glove, ScriptedModel
from glove_mcp import (
    McpCatalogueEntry,
    McpTool,
    MemoryMcpAdapter,
    adapter_auth,
    bearer,
    connect_mcp,
    headers,
    include_tool,
    mount_mcp,
)
from glove_mcp.connect import ConnectionState, McpClientPool, ProtocolChoice
from glove_mcp.errors import (
    McpAuthExpiredError,
    McpInsufficientScopeError,
    McpProtocolError,
    McpServerUnavailableError,
    McpStateError,
    McpTimeoutError,
)
from glove_mcp.testing import McpTestServer, ServerControl, build_paged_server, serve
from glove_mcp.testing.servers import NOTES_TOOL_NAMES
from glove_mcp.types import McpTextContent, TaskSupport

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)


@pytest.fixture
async def notes() -> AsyncIterator[McpTestServer]:
    async with McpTestServer("notes") as server:
        yield server


async def test_lists_every_tool_with_schemas_and_annotations(notes: McpTestServer) -> None:
    async with await connect_mcp("notes", notes.url) as conn:
        tools = {t.name: t for t in await conn.list_tools()}
    assert sorted(tools) == sorted(NOTES_TOOL_NAMES)
    assert tools["read_page"].input_schema["required"] == ["page_id"]
    assert tools["read_page"].annotations is not None
    assert tools["read_page"].annotations.read_only_hint is True
    assert tools["read_page"].output_schema is not None


async def test_call_returns_structured_content_and_reuses_one_session(
    notes: McpTestServer,
) -> None:
    async with await connect_mcp("notes", notes.url) as conn:
        first = await conn.call_tool("read_page", {"page_id": "p1"})
        second = await conn.call_tool("create_page", {"title": "New", "body": "x"})
        assert conn.state is ConnectionState.CONNECTED
    assert first.structured_content == {
        "id": "p1",
        "title": "Roadmap",
        "body": "Ship glove_mcp in Q1.",
    }
    assert second.structured_content is not None
    assert second.structured_content["title"] == "New"
    assert notes.control.handshakes == 1


async def test_server_side_tool_error_comes_back_as_is_error(notes: McpTestServer) -> None:
    async with await connect_mcp("notes", notes.url) as conn:
        result = await conn.call_tool("read_page", {"page_id": "nope"})
    assert result.is_error
    assert isinstance(result.content[0], McpTextContent)
    assert "no page with id 'nope'" in result.content[0].text


async def test_exclude_and_filter_go_through_include_tool(notes: McpTestServer) -> None:
    def no_writes(namespace: str, tool: McpTool) -> bool:
        assert namespace == "notes"
        return tool.read_only

    async with await connect_mcp(
        "notes", notes.url, exclude_tools=["search_pages"], filter_tools=no_writes
    ) as conn:
        names = {t.name for t in await conn.list_tools()}
    assert "search_pages" not in names
    assert "create_page" not in names and "update_page" not in names
    assert "read_page" in names
    tool = McpTool(name="x", input_schema={"type": "object"})
    assert include_tool("s", tool)
    assert not include_tool("s", tool, exclude_tools={"x"})
    assert not include_tool("s", tool, filter_tools=lambda ns, t: False)


@pytest.mark.parametrize("support", [None, "optional", "forbidden", "required"])
def test_every_task_support_is_offered(support: TaskSupport | None) -> None:
    # Tools that require tasks are called as tasks (tests/glove_mcp/connect/test_tasks.py and the
    # server-everything interop tests), so nothing is hidden for it.
    tool = McpTool(name="research", task_support=support)
    assert include_tool("s", tool)


async def test_follows_tool_list_pagination() -> None:
    cursors: list[str | None] = []
    server = build_paged_server(tool_count=25, page_size=10, cursors=cursors)
    async with serve(server) as url, await connect_mcp("paged", url) as conn:
        tools = await conn.list_tools()
        listed = list(cursors)
        # (Checking the call, the stateless server lists its own tools again: not our pages.)
        result = await conn.call_tool("tool_24", {"x": "y"})
    assert [t.name for t in tools] == [f"tool_{i}" for i in range(25)]
    assert listed == [None, "10", "20"]
    assert isinstance(result.content[0], McpTextContent)
    assert result.content[0].text == "tool_24 [('x', 'y')]"


async def test_token_is_resolved_per_request() -> None:
    control = ServerControl(tokens={"t1"})
    current = {"token": "t1"}
    asked: list[str] = []

    def token() -> str:
        asked.append(current["token"])
        return current["token"]

    async with (
        serve("notes", control=control) as url,
        await connect_mcp("notes", url, auth=bearer(token)) as conn,
    ):
        await conn.call_tool("read_page", {"page_id": "p1"})
        # The server rotates its accepted token and the app refreshes its store: the next
        # request reads the new token without reconnecting.
        control.tokens = {"t2"}
        current["token"] = "t2"
        control.seen_tokens.clear()
        asked.clear()
        result = await conn.call_tool("read_page", {"page_id": "p1"})
    # (The SDK may also open its server-to-client stream meanwhile: count kinds, not requests.)
    assert control.seen_tokens and set(control.seen_tokens) == {"t2"}
    assert asked and set(asked) == {"t2"}
    assert result.structured_content is not None
    assert control.handshakes == 1


async def test_401_asks_for_a_fresh_token_and_retries_once() -> None:
    control = ServerControl(tokens={"t3"})
    answers = ["stale"]

    async def token() -> str:
        # The first answer is stale; asking again gives the fresh token.
        return answers.pop() if answers else "t3"

    async with (
        serve("notes", control=control) as url,
        await connect_mcp("notes", url, auth=bearer(token)) as conn,
    ):
        assert control.seen_tokens[:2] == ["stale", "t3"]
        assert conn.state is ConnectionState.CONNECTED
        assert (await conn.call_tool("read_page", {"page_id": "p1"})).is_error is False


class _Source:
    def __init__(self) -> None:
        self.calls: list[bool] = []

    async def access_token(self, *, force_refresh: bool = False) -> str:
        self.calls.append(force_refresh)
        return "fresh" if force_refresh else "old"


async def test_token_source_is_told_to_refresh_after_401() -> None:
    source = _Source()
    control = ServerControl(tokens={"fresh"})
    async with (
        serve("notes", control=control) as url,
        await connect_mcp("notes", url, auth=bearer(source)) as conn,
    ):
        result = await conn.call_tool("read_page", {"page_id": "p2"})
    assert result.structured_content is not None
    assert source.calls[:2] == [False, True]


async def test_401_after_a_fresh_token_raises_auth_expired() -> None:
    control = ServerControl(tokens={"good"})
    async with serve("notes", control=control) as url:
        async with await connect_mcp("notes", url, auth=bearer(lambda: "good")) as conn:
            control.tokens = {"rotated-elsewhere"}
            with pytest.raises(McpAuthExpiredError, match=r"'notes'.*401") as info:
                await conn.call_tool("read_page", {"page_id": "p1"})
            assert "good" not in str(info.value)
            # The token comes back: the next call works without reconnecting.
            control.tokens = {"good"}
            inits = control.handshakes
            assert (await conn.call_tool("read_page", {"page_id": "p1"})).is_error is False
            assert control.handshakes == inits
        with pytest.raises(McpAuthExpiredError):
            await connect_mcp("notes", url, auth=bearer("wrong"))


async def test_answer_401_switch_and_headers_auth() -> None:
    control = ServerControl()
    async with serve("notes", control=control) as url:
        conn = await connect_mcp("notes", url, auth=headers({"Authorization": "Bearer k"}))
        assert control.seen_tokens[-1] == "k"
        control.answer_401 = True
        with pytest.raises(McpAuthExpiredError):
            await conn.list_tools()
        await conn.close()


async def test_adapter_auth_prefers_headers_then_token() -> None:
    class HeaderAdapter(MemoryMcpAdapter):
        async def get_auth_headers(self, id: str) -> dict[str, str] | None:
            return {"Authorization": "Bearer from-headers"} if id == "notes" else None

    control = ServerControl(tokens={"from-headers", "from-token"})
    adapter = HeaderAdapter("conv", tokens={"notes": "from-token", "other": "from-token"})
    async with serve("notes", control=control) as url:
        async with await connect_mcp("notes", url, auth=adapter_auth(adapter, "notes")):
            assert control.seen_tokens[-1] == "from-headers"
        async with await connect_mcp("other", url, auth=adapter_auth(adapter, "other")):
            assert control.seen_tokens[-1] == "from-token"
    assert "from" not in repr(adapter_auth(adapter, "notes"))


async def test_speaks_the_stateless_protocol_to_a_2x_server(notes: McpTestServer) -> None:
    async with await connect_mcp("notes", notes.url) as conn:
        assert conn.protocol_version == "2026-07-28"
        assert len(await conn.list_tools()) == len(NOTES_TOOL_NAMES)
        await conn.call_tool("read_page", {"page_id": "p1"})
        assert conn.protocol == "auto"
    # server/discover, tools/list, tools/call: no initialized notification, no DELETE.
    assert notes.control.requests == 3
    assert notes.control.discovers == notes.control.handshakes == 1
    assert conn.protocol_version is None  # closed


async def test_falls_back_to_the_handshake_and_remembers_it() -> None:
    control = ServerControl(legacy_only=True)
    async with serve("notes", control=control) as url:
        async with await connect_mcp("notes", url) as conn:
            assert conn.protocol == "legacy"
            assert conn.protocol_version == "2025-11-25"
            assert len(await conn.list_tools()) == len(NOTES_TOOL_NAMES)
            # The server drops the session: the reconnect goes straight to initialize.
            control.expire_sessions()
            assert (await conn.call_tool("read_page", {"page_id": "p1"})).is_error is False
        assert control.discovers == 1
        assert control.handshakes == 3  # discover, initialize, initialize again
        async with await connect_mcp("notes", url, protocol="legacy") as conn:
            assert conn.protocol_version == "2025-11-25"
        assert control.discovers == 1


def _rpc_error(code: int, message: str) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    ).encode()


_JSON = "application/json"
_OLDER_SERVER_ANSWERS = {
    # The TypeScript SDK (server-everything, the conformance servers, most hosted servers).
    "ts-unsupported-version": (
        400,
        _JSON,
        _rpc_error(-32000, "Bad Request: Unsupported protocol version: 2026-07-28"),
    ),
    "ts-not-initialized": (400, _JSON, _rpc_error(-32000, "Bad Request: Server not initialized")),
    "invalid-request": (400, _JSON, _rpc_error(-32600, "Bad Request: Missing session ID")),
    "method-not-found": (404, _JSON, _rpc_error(-32601, "Method not found")),
    "invalid-params": (400, _JSON, _rpc_error(-32602, "Invalid params")),
    "bare-404": (404, "text/plain", b"Not Found"),
    "bare-405": (405, "text/plain", b"Method Not Allowed"),
    "bare-406": (406, "text/plain", b"Not Acceptable"),
    "bare-400-empty": (400, _JSON, b""),
    "200-not-json": (200, _JSON, b"<html>hello</html>"),
    "200-empty": (200, _JSON, b""),
}


@pytest.mark.parametrize("answer", sorted(_OLDER_SERVER_ANSWERS))
async def test_every_older_server_answer_to_discover_falls_back_to_the_handshake(
    answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    control = ServerControl(legacy_only=True, discover_rejection=_OLDER_SERVER_ANSWERS[answer])
    caplog.set_level(logging.DEBUG, logger="glove_mcp.connect._mcp_session")
    async with serve("notes", control=control) as url, await connect_mcp("notes", url) as conn:
        assert conn.protocol == "legacy"
        assert conn.protocol_version == "2025-11-25"
        assert len(await conn.list_tools()) == len(NOTES_TOOL_NAMES)
    assert control.discovers == 1
    assert "using the initialize handshake" in caplog.text


async def test_a_server_error_on_discover_is_not_taken_for_an_old_server() -> None:
    control = ServerControl(
        legacy_only=True, discover_rejection=(503, _JSON, _rpc_error(-32603, "overloaded"))
    )
    async with serve("notes", control=control) as url:
        with pytest.raises(McpProtocolError, match="'notes'"):
            await connect_mcp("notes", url)
    assert control.handshakes == control.discovers == 1  # no initialize after it


async def test_a_server_that_is_down_is_unreachable_not_old() -> None:
    with pytest.raises(McpServerUnavailableError, match=r"'gone'.*unreachable"):
        await connect_mcp("gone", "http://127.0.0.1:9/mcp", connect_timeout=5)


async def test_a_stalled_server_is_not_taken_for_an_old_one(notes: McpTestServer) -> None:
    notes.control.stall()
    with pytest.raises(McpTimeoutError, match="'notes'"):
        await connect_mcp("notes", notes.url, connect_timeout=0.3)
    notes.control.release()
    assert notes.control.handshakes == notes.control.discovers == 1  # no initialize after it
    async with await connect_mcp("notes", notes.url) as conn:
        assert conn.protocol_version == "2026-07-28"


async def test_rejects_an_unknown_protocol() -> None:
    with pytest.raises(ValueError, match="protocol must be 'auto' or 'legacy'"):
        await connect_mcp("notes", "http://127.0.0.1:9/mcp", protocol="2024")  # type: ignore[arg-type]


async def test_expired_session_404_reinitializes_and_retries_once(notes: McpTestServer) -> None:
    async with await connect_mcp("notes", notes.url, protocol="legacy") as conn:
        await conn.call_tool("read_page", {"page_id": "p1"})
        assert notes.control.expire_sessions() == 1
        result = await conn.call_tool("read_page", {"page_id": "p2"})
        assert result.structured_content is not None
        assert result.structured_content["title"] == "Meeting notes"
        assert notes.control.handshakes == 2
        # list_tools recovers the same way.
        notes.control.expire_sessions()
        assert len(await conn.list_tools()) == len(NOTES_TOOL_NAMES)
        assert notes.control.handshakes == 3
        assert conn.reconnects == 2


async def test_server_down_then_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.CRITICAL, logger="uvicorn.error")
    server = McpTestServer("notes")
    await server.start()
    conn = await connect_mcp("notes", server.url)
    try:
        await server.stop()
        with pytest.raises(McpServerUnavailableError, match=r"'notes'.*unreachable"):
            await conn.call_tool("read_page", {"page_id": "p1"})
        with pytest.raises(McpServerUnavailableError, match="'notes'"):
            await conn.call_tool("read_page", {"page_id": "p1"})
        assert conn.state.value == "idle"
        await server.start()  # same port
        result = await conn.call_tool("read_page", {"page_id": "p1"})
        assert result.structured_content is not None
        assert conn.state is ConnectionState.CONNECTED
    finally:
        await conn.close()
        await server.stop()


async def test_connection_refused_names_the_server() -> None:
    server = McpTestServer("notes")
    await server.start()
    url = server.url
    await server.stop()
    with pytest.raises(McpServerUnavailableError, match=r"'notes' at http://127.0.0.1"):
        await connect_mcp("notes", url)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_stalled_server_times_out_and_next_call_reconnects(
    notes: McpTestServer, protocol: ProtocolChoice
) -> None:
    async with await connect_mcp("notes", notes.url, call_timeout=0.3, protocol=protocol) as conn:
        notes.control.stall()
        with pytest.raises(McpTimeoutError, match=r"'notes'.*tools/call 'read_page'"):
            await conn.call_tool("read_page", {"page_id": "p1"})
        notes.control.release()
        result = await conn.call_tool("read_page", {"page_id": "p1"})
        assert result.structured_content is not None
        assert notes.control.handshakes == 2


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_cancelled_call_to_a_stalled_server_returns_at_once(
    notes: McpTestServer, protocol: ProtocolChoice
) -> None:
    # Cancelling a request makes the SDK tell the server (notifications/cancelled) and wait up
    # to 5 s for that to go out; a stalled handshake-era server never takes it.
    async with await connect_mcp("notes", notes.url, protocol=protocol) as conn:
        notes.control.stall()
        call = asyncio.create_task(conn.call_tool("read_page", {"page_id": "p1"}))
        await notes.control.wait_stalled()
        call.cancel()
        done, _ = await asyncio.wait({call}, timeout=2.5)
        assert done, "the cancelled call waited on the stalled server"
        assert call.cancelled()
        notes.control.release()
        result = await conn.call_tool("read_page", {"page_id": "p1"})
        assert result.structured_content is not None


async def test_close_from_another_task_and_use_after_close(notes: McpTestServer) -> None:
    conn = await connect_mcp("notes", notes.url)
    await conn.call_tool("read_page", {"page_id": "p1"})
    await asyncio.create_task(conn.close())
    assert conn.state.value == "closed"
    await conn.close()  # idempotent
    with pytest.raises(McpStateError, match="'notes' is closed"):
        await conn.call_tool("read_page", {"page_id": "p1"})
    with pytest.raises(McpStateError):
        _ = conn.raw


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_closing_while_a_call_waits_on_a_stalled_server_ends_the_call(
    notes: McpTestServer, protocol: ProtocolChoice
) -> None:
    conn = await connect_mcp("notes", notes.url, protocol=protocol)
    notes.control.stall()
    call = asyncio.create_task(conn.call_tool("read_page", {"page_id": "p1"}))
    await notes.control.wait_stalled()
    await asyncio.create_task(conn.close())
    done, _ = await asyncio.wait({call}, timeout=2.5)
    assert done, "the call outlived its connection"
    with pytest.raises(McpStateError, match="'notes' is closed"):
        call.result()
    notes.control.release()


async def test_without_a_pool_a_connection_owns_one_and_a_mount_shares_its_own(
    notes: McpTestServer,
) -> None:
    a = await connect_mcp("a", notes.url)
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    entry = McpCatalogueEntry(id="notes", name="Notes", description="notes", url=notes.url)
    adapter = MemoryMcpAdapter("c", active=["notes"])
    mount = await mount_mcp(glove, adapter=adapter, entries=[entry])
    glove.build()
    assert a.pool is not mount.pool
    connection = mount.connection("notes")
    assert connection is not None and connection.pool is mount.pool
    await a.close()
    # Its own pool closes with it; the mount's stays open.
    assert [p.closed for p in (a.pool, mount.pool)] == [True, False]
    assert (await glove.process_request("hi")).text == "ok"
    await mount.aclose()
    assert mount.pool.closed
    with pytest.raises(McpStateError, match="McpClientPool is closed"):
        _ = mount.pool.transport


async def test_a_pool_passed_in_is_never_closed_by_its_users(notes: McpTestServer) -> None:
    async with McpClientPool() as pool:
        a = await connect_mcp("a", notes.url, pool=pool)
        b = await connect_mcp("b", notes.url, pool=pool)
        assert a.pool is b.pool is pool
        await a.close()
        assert not pool.closed
        assert (await b.call_tool("read_page", {"page_id": "p2"})).is_error is False
        await b.close()
        assert not pool.closed
    assert pool.closed


async def test_tokens_never_reach_reprs_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    secret = "s3cret-token-value"
    caplog.set_level(logging.DEBUG)
    control = ServerControl(tokens={secret})
    async with serve("notes", control=control) as url:
        auth = bearer(secret)
        conn = await connect_mcp("notes", url, auth=auth)
        control.tokens = {"other"}
        with pytest.raises(McpAuthExpiredError) as info:
            await conn.call_tool("read_page", {"page_id": "p1"})
        texts = [repr(auth), str(auth), repr(conn), str(info.value), repr(info.value)]
        await conn.close()
    assert control.seen_tokens.count(secret) >= 2
    for text in [*texts, caplog.text]:
        assert secret not in text


async def test_failing_token_source_becomes_auth_expired_not_a_broken_session() -> None:
    class NeedsLogin(Exception):
        pass

    def source() -> str:
        raise NeedsLogin("no tokens for 'notes': run glove-mcp auth notes")

    control = ServerControl(tokens={"good"})
    async with serve("notes", control=control) as url:
        with pytest.raises(McpAuthExpiredError, match="NeedsLogin: no tokens for 'notes'"):
            await connect_mcp("notes", url, auth=bearer(source))
        answers = iter(["good"])

        def flaky() -> str:
            token = next(answers, None)
            if token is None:
                raise NeedsLogin("refresh token revoked")
            return token

        conn = await connect_mcp("notes", url, auth=bearer(flaky))
        try:
            with pytest.raises(McpAuthExpiredError, match="refresh token revoked"):
                await conn.call_tool("read_page", {"page_id": "p1"})
        finally:
            await conn.close()


async def test_a_missing_scope_is_named_not_taken_for_a_protocol_error() -> None:
    control = ServerControl(insufficient_scope="notes:write")
    async with serve("notes", control=control) as url, await connect_mcp("notes", url) as conn:
        assert len(await conn.list_tools()) == len(NOTES_TOOL_NAMES)  # listing needs no scope
        with pytest.raises(McpInsufficientScopeError, match="lacks scope 'notes:write'") as caught:
            await conn.call_tool("read_page", {"page_id": "p1"})
        assert caught.value.scope == "notes:write" and "scope=" in str(caught.value)
        control.insufficient_scope = None
        assert (await conn.call_tool("read_page", {"page_id": "p1"})).is_error is False
