"""Issue 16, item 6: no limits on what a server lists.

10,000 tools mounted in 2 s and 2.7 MB of definitions went to the model on every call; a
server whose cursor never ended produced 50,000 tools; a 5 MB schema and a 2 MB description
passed through verbatim. A mount now bounds each server's listing (``ListingLimits``): over a
bound the server mounts with what fits, and the log, the subscribers and the model are told
what was left out; the other servers are unaffected, and re-listings get the same bounds."""

from __future__ import annotations

import functools
import json
import logging
from typing import Any

import mcp_types as types
import pytest
from mcp.server.lowlevel.server import Server

from glove_core import Glove, ModelRequest, ScriptedModel, ToolCall
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.mount import ListingLimits
from glove_mcp.subscribers import McpListingLimited
from glove_mcp.testing import build_paged_server, serve
from tests.glove_mcp.connect.probe_server import build_probe_server

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

_OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}}


def _entry(id: str, url: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(id=id, name=id, description="d", url=url)


def _glove(recorder: RecordingSubscriber, script: list[Any] | None = None) -> Glove:
    glove = Glove(model=ScriptedModel(script or ["ok"]), system_prompt="t", server_mode=True)
    glove.add_subscriber(recorder)
    return glove


def _endless_server(page_size: int, cursors: list[str | None]) -> Server[Any]:
    """Every page has new tools and a new cursor: the listing never ends."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        cursors.append(cursor)
        page = int(cursor or 0)
        tools = [types.Tool(name=f"t{page}_{i}", input_schema=_OBJECT) for i in range(page_size)]
        return types.ListToolsResult(tools=tools, next_cursor=str(page + 1))

    return Server("endless", on_list_tools=list_tools)


def _fixed_server(tools: list[types.Tool]) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=f"ran {params.name}")])

    return Server("fixed", on_list_tools=list_tools, on_call_tool=call_tool)


def _offered(request: ModelRequest, server: str) -> list[Any]:
    return [t for t in request.tools if t.name.startswith(f"{server}__")]


def _definition_bytes(tools: list[Any]) -> int:
    return sum(
        len(t.name) + len(t.description.encode()) + len(json.dumps(t.input_schema).encode())
        for t in tools
    )


def _told(request: ModelRequest, text: str) -> bool:
    return any(text in (m.text or "") for m in request.messages)


async def test_ten_thousand_tools_offer_the_first_128_and_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cursors: list[str | None] = []
    server = build_paged_server(tool_count=10_000, page_size=100, cursors=cursors)
    recorder = RecordingSubscriber()
    glove = _glove(recorder)
    caplog.set_level(logging.WARNING, logger="glove_mcp")
    async with (
        serve(server) as url,
        serve("notes") as notes_url,
        await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter("conv", active=["many", "notes"]),
            entries=[_entry("many", url), _entry("notes", notes_url)],
        ) as mount,
    ):
        assert sorted(mount.loaded) == ["many", "notes"]  # the other server is unaffected
        read = list(cursors)
        await glove.build().process_request("hi")
    # 128 offered, 1,000 held and one more to tell: 12 pages of a hundred, not a hundred pages.
    assert read == [None] + [str(page * 100) for page in range(1, 12)]
    [request] = glove.model.requests  # type: ignore[attr-defined]
    offered = _offered(request, "many")
    assert [t.name for t in offered] == [f"many__tool_{i}" for i in range(128)] + [
        "many__more_tools"
    ]
    assert _offered(request, "notes")
    [event] = recorder.of(McpListingLimited)
    assert event.server == "many" and event.more_tools
    assert "lists more than 128 tools (max_tools)" in event.detail
    assert "lists more than 128 tools (max_tools)" in caplog.text
    assert _told(request, "MCP server 'many' lists more than 128 tools")


async def test_an_endless_cursor_is_read_for_a_few_pages_only() -> None:
    cursors: list[str | None] = []
    recorder = RecordingSubscriber()
    glove = _glove(recorder)
    async with (
        serve(_endless_server(50, cursors)) as url,
        await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter("conv", active=["endless"]),
            entries=[_entry("endless", url)],
        ) as mount,
    ):
        names = mount.tool_names("endless")
    # 1,129 tools wanted: 23 pages of fifty, not a thousand pages, not 50,000 tools.
    assert cursors == [None] + [str(page) for page in range(1, 23)]
    assert len(names) == 129  # 128 and the tool that finds the held ones
    [event] = recorder.of(McpListingLimited)
    assert event.more_tools


async def test_a_huge_schema_is_skipped_and_a_huge_description_is_cut() -> None:
    huge_schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "description": "y" * 5_000_000}},
    }
    tools = [
        types.Tool(name="huge_schema", description="fine words", input_schema=huge_schema),
        types.Tool(name="wordy", description="z" * 2_000_000, input_schema=_OBJECT),
        types.Tool(name="plain", description="A plain tool.", input_schema=_OBJECT),
    ]
    recorder = RecordingSubscriber()
    script: list[Any] = [[ToolCall(id="c1", name="big__wordy", input={"x": "1"})], "done"]
    glove = _glove(recorder, script)
    async with (
        serve(_fixed_server(tools)) as url,
        await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter("conv", active=["big"]),
            entries=[_entry("big", url)],
        ),
    ):
        result = await glove.build().process_request("go")
    request = glove.model.requests[0]  # type: ignore[attr-defined]
    offered = {t.name: t for t in _offered(request, "big")}
    assert sorted(offered) == ["big__plain", "big__wordy"]
    wordy = offered["big__wordy"].description
    assert wordy.startswith("z" * 10_000) and "description cut: 2,000,000 characters" in wordy
    assert len(wordy) < 10_200
    assert _definition_bytes(list(offered.values())) < 20_000
    [event] = recorder.of(McpListingLimited)
    assert event.not_offered == ("big__huge_schema",) and event.cut == ("big__wordy",)
    assert "over 64,000 bytes (max_schema_bytes): big__huge_schema" in event.detail
    assert _told(request, "max_schema_bytes")
    # The cut tool still works: the conversation goes on.
    [call] = [r.result for m in result.messages for r in (m.tool_results or [])]
    assert call.status == "success" and call.data == "ran wordy"


async def test_the_total_size_is_bounded_per_server() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "description": "w" * 900}}}
    tools = [types.Tool(name=f"t{i}", input_schema=schema) for i in range(20)]
    recorder = RecordingSubscriber()
    limits = ListingLimits(max_listing_bytes=5_000)
    async with (
        serve(_fixed_server(tools)) as url,
        await mount_mcp(
            _glove(recorder),
            adapter=MemoryMcpAdapter("conv", active=["big"]),
            entries=[_entry("big", url)],
            listing_limits=limits,
        ) as mount,
    ):
        offered = sorted(mount.tool_names("big").values())
    assert offered == ["t0", "t1", "t2", "t3", "t4"]  # just under 1,000 bytes each
    [event] = recorder.of(McpListingLimited)
    assert len(event.not_offered) == 15 and "(max_listing_bytes)" in event.detail


async def test_a_relisting_gets_the_same_bounds() -> None:
    """The probe lists four tools; ``grow`` adds a fifth, past ``max_tools=4``. (It lists no
    resources, so the mount offers no resource reader beside them.)"""
    first_four = {"steps", "chatter", "grow", "shrink"}
    recorder = RecordingSubscriber()

    async def after_grow(request: ModelRequest) -> str:
        await recorder.wait_for(McpListingLimited)
        return "grown"

    glove = _glove(recorder, [[ToolCall(id="c0", name="probe__grow", input={})], after_grow, "x"])
    async with (
        serve(build_probe_server()) as url,
        await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter("conv", active=["probe"]),
            entries=[_entry("probe", url)],
            listing_limits=ListingLimits(max_tools=4),
        ) as mount,
    ):
        assert set(mount.tool_names("probe").values()) == first_four
        assert not recorder.of(McpListingLimited)
        await glove.build().process_request("grow")
        await glove.process_request("again")
        names = mount.tool_names("probe")
    assert set(names.values()) == first_four | {"more_tools"}
    [event] = recorder.of(McpListingLimited)
    assert event.more_tools and "more than 4 tools" in event.detail
    assert event.held == ("probe__extra",)
    last = glove.model.requests[-1]  # type: ignore[attr-defined]
    assert "probe__extra" not in {t.name for t in last.tools}
    assert _told(last, "MCP server 'probe' lists more than 4 tools")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_tools", 0),
        ("max_tools", 10_001),
        ("max_tools", True),
        ("max_description_chars", 50),
        ("max_schema_bytes", 1.5),
        ("max_listing_bytes", -1),
    ],
)
def test_bad_limits_are_refused(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"ListingLimits\.{field} must be an int from .* got"):
        ListingLimits(**{field: value})
