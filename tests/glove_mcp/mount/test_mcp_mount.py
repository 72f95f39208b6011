"""mount_mcp against local servers over HTTP: parallel reload, failing open, activation,
deactivation and closing."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp.server.lowlevel.server import Server
from mcp_types import ListToolsResult
from mcp_types import Tool as SdkTool

from glove_core import Glove, ModelRequest, ScriptedModel, SubscriberEvent, Tool, ToolCall
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, McpMount, MemoryMcpAdapter, mount_mcp
from glove_mcp.connect import ConnectionState
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.errors import McpActivationError, McpStateError, McpUnknownServerError
from glove_mcp.subscribers import McpServerFailed
from glove_mcp.testing import McpTestServer, serve

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)


@dataclass
class Recorder:
    events: list[SubscriberEvent] = field(default_factory=list)

    async def record(self, event: SubscriberEvent) -> None:
        self.events.append(event)

    def of(self, kind: str) -> list[Any]:
        return [event for event in self.events if event.kind == kind]


@dataclass
class Servers:
    notes: McpTestServer
    tracker: McpTestServer
    down_url: str

    def entries(self) -> list[McpCatalogueEntry]:
        return [
            McpCatalogueEntry(id="notes", name="Notes", description="pages", url=self.notes.url),
            McpCatalogueEntry(
                id="tracker",
                name="Tracker",
                description="issues",
                url=self.tracker.url,
                exclude_tools=["delete_issue"],
            ),
            McpCatalogueEntry(id="down", name="Down", description="gone", url=self.down_url),
        ]


@pytest.fixture
async def servers() -> AsyncIterator[Servers]:
    gone = McpTestServer("notes")
    await gone.start()
    down_url = gone.url
    await gone.stop()
    async with McpTestServer("notes") as notes, McpTestServer("tracker") as tracker:
        yield Servers(notes, tracker, down_url)


def _glove(script: list[Any] | None = None, server_mode: bool = True) -> Glove:
    model = ScriptedModel(script or ["ok"])
    return Glove(model=model, system_prompt="test", server_mode=server_mode)


def _names(glove: Glove) -> set[str]:
    """The MCP tools folded (mount_mcp also folds the discovery tool, find_capability)."""
    return {t.name for t in glove.tools if t.name != FIND_CAPABILITY}


async def test_mount_with_one_of_three_failing(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    glove = _glove()
    recorder = Recorder()
    glove.add_subscriber(recorder)
    adapter = MemoryMcpAdapter("conv", active=["notes", "down", "tracker", "retired"])
    caplog.set_level(logging.WARNING, logger="glove_mcp.mount")
    async with await mount_mcp(glove, adapter=adapter, entries=servers.entries()) as mount:
        assert sorted(mount.loaded) == ["notes", "tracker"]
        names = _names(glove)
        assert "notes__read_page" in names and "tracker__list_issues" in names
        assert "tracker__delete_issue" not in names  # the entry excludes it
        assert not any(n.startswith("down__") for n in names)
        [failed] = recorder.of("mcp_server_failed")
        assert isinstance(failed, McpServerFailed)
        assert failed.server == "down" and failed.phase == "reload"
        assert "unreachable" in failed.error
        assert "'down' failed to reload" in caplog.text
        # The adapter still lists it: a transient outage must not forget the user's choice.
        assert "down" in await adapter.get_active()
        # ids not in the catalogue are ignored, not errors
        assert "retired" not in mount.loaded
        assert mount.tool_names("notes")["notes__read_page"] == "read_page"


async def test_reload_is_parallel(servers: Servers) -> None:
    """Every server receives its first request while all of them are held: a sequential
    reload would wait for the first forever (the wait_for guard turns that into a failure)."""
    controls = [servers.notes.control, servers.tracker.control]
    for control in controls:
        control.stall()
    adapter = MemoryMcpAdapter("conv", active=["notes", "tracker"])
    glove = _glove()
    mounting = asyncio.create_task(mount_mcp(glove, adapter=adapter, entries=servers.entries()))
    await asyncio.wait_for(asyncio.gather(*(c.wait_stalled() for c in controls)), 10)
    for control in controls:
        control.release()
    mount = await mounting
    assert sorted(mount.loaded) == ["notes", "tracker"]
    await mount.aclose()


async def test_bridged_tools_work_through_the_glove(servers: Servers) -> None:
    script: list[Any] = [
        [ToolCall(id="c1", name="tracker__create_issue", input={"title": "Bug"})],
        "created",
    ]
    glove = _glove(script)
    adapter = MemoryMcpAdapter("conv", active=["tracker"])
    async with await mount_mcp(glove, adapter=adapter, entries=servers.entries()):
        result = await glove.build().process_request("file a bug")
    [tool_result] = [r for m in result.messages for r in (m.tool_results or [])]
    assert tool_result.result.status == "success"
    assert tool_result.result.data["title"] == "Bug"


async def test_an_entry_can_ask_for_the_handshake_protocol(servers: Servers) -> None:
    entries = [
        McpCatalogueEntry(id="a", name="A", description="pages", url=servers.notes.url),
        McpCatalogueEntry(
            id="b", name="B", description="issues", url=servers.tracker.url, protocol="legacy"
        ),
    ]
    adapter = MemoryMcpAdapter("conv", active=["a", "b"])
    async with await mount_mcp(_glove(), adapter=adapter, entries=entries) as mount:
        assert mount.loaded == ["a", "b"]
    assert servers.notes.control.discovers == 1
    assert servers.tracker.control.discovers == 0
    assert servers.tracker.control.handshakes == 1


async def test_adapter_tokens_reach_the_server(servers: Servers) -> None:
    servers.notes.control.tokens = {"secret-notes"}
    adapter = MemoryMcpAdapter("conv", active=["notes"], tokens={"notes": "secret-notes"})
    async with await mount_mcp(_glove(), adapter=adapter, entries=servers.entries()) as mount:
        assert mount.loaded == ["notes"]
        assert "secret-notes" not in repr(mount) + repr(adapter)
    assert "secret-notes" in servers.notes.control.seen_tokens


async def test_activate_and_deactivate(servers: Servers) -> None:
    seen_tools: list[set[str]] = []

    def snapshot(reply: Any) -> Any:
        def item(request: ModelRequest) -> Any:
            seen_tools.append({t.name for t in request.tools})
            return reply

        return item

    def read(call_id: str) -> list[ToolCall]:
        return [ToolCall(id=call_id, name="notes__search_pages", input={"query": "x"})]

    glove = _glove(
        [
            snapshot("one"),
            snapshot(read("c1")),
            snapshot("two"),
            snapshot(read("c2")),
            snapshot("three"),
        ]
    )
    glove.build()
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    adapter = MemoryMcpAdapter("conv")
    async with await mount_mcp(glove, adapter=adapter, entries=servers.entries()) as mount:
        assert mount.loaded == []
        names = await mount.activate("notes")
        assert "notes__search_pages" in names
        assert await mount.activate("notes") == names  # idempotent
        assert await adapter.get_active() == ["notes"]
        await glove.process_request("first")
        connection = mount.connection("notes")
        assert connection is not None

        switched = await mount.deactivate("notes")
        assert sorted(switched) == sorted(names)
        assert connection.state is ConnectionState.CLOSED
        assert await adapter.get_active() == []
        assert await mount.deactivate("notes") == []  # idempotent
        second = await glove.process_request("second")
        (inactive,) = [r.result for m in second.messages for r in (m.tool_results or [])]
        assert inactive.message is not None and inactive.message.startswith("tool_inactive")

        assert await mount.activate("notes") == names  # back on, over a new connection
        third = await glove.process_request("third")
        (active,) = [r.result for m in third.messages for r in (m.tool_results or [])]
        assert active.status == "success"
    # The tool list never changed: switching off keeps the prompt cache's prefix.
    assert seen_tools[0] == seen_tools[1] == seen_tools[3]
    assert "notes__read_page" in seen_tools[0]
    kinds = [kind for kind in recorder.names() if kind.startswith("mcp_")]
    assert kinds[:3] == ["mcp_server_activated", "mcp_server_deactivated", "mcp_server_deactivated"]


async def test_failed_activation_leaves_nothing_behind(servers: Servers) -> None:
    glove = _glove()
    adapter = MemoryMcpAdapter("conv")
    async with await mount_mcp(glove, adapter=adapter, entries=servers.entries()) as mount:
        with pytest.raises(McpActivationError, match="'down' could not be activated") as info:
            await mount.activate("down")
        assert info.value.__cause__ is not None
        with pytest.raises(McpUnknownServerError, match=r"'nope'.*known ids: 'down', 'notes'"):
            await mount.activate("nope")
        assert _names(glove) == set() and mount.loaded == []
        assert await adapter.get_active() == []


async def test_failed_adapter_rolls_back_activation(servers: Servers) -> None:
    class Broken(MemoryMcpAdapter):
        async def activate(self, id: str) -> None:
            raise OSError("disk full")

    glove = _glove()
    async with await mount_mcp(glove, adapter=Broken("c"), entries=servers.entries()) as mount:
        with pytest.raises(McpActivationError, match="adapter failed to record it: disk full"):
            await mount.activate("notes")
        assert _names(glove) == set() and mount.loaded == []


async def test_name_conflict_rolls_back_activation(servers: Servers) -> None:
    glove = _glove()

    glove.fold(Tool(name="notes__update_page", description="mine", do=lambda i, c: None))
    async with await mount_mcp(
        glove, adapter=MemoryMcpAdapter("c"), entries=servers.entries()
    ) as m:
        with pytest.raises(McpActivationError, match="notes__update_page"):
            await m.activate("notes")
        assert _names(glove) == {"notes__update_page"}


async def test_close_from_another_task_closes_every_connection(servers: Servers) -> None:
    adapter = MemoryMcpAdapter("conv", active=["notes", "tracker"])
    mount = await mount_mcp(_glove(), adapter=adapter, entries=servers.entries())
    connections = [mount.connection("notes"), mount.connection("tracker")]
    await asyncio.create_task(mount.aclose())
    assert all(c is not None and c.state is ConnectionState.CLOSED for c in connections)
    await mount.aclose()  # idempotent
    with pytest.raises(McpStateError, match="closed"):
        await mount.activate("notes")
    assert isinstance(mount, McpMount)


async def test_discovery_settings_are_kept_for_issue_7(servers: Servers) -> None:
    headless = await mount_mcp(_glove(), adapter=MemoryMcpAdapter("c"), entries=[])
    interactive = await mount_mcp(
        _glove(server_mode=False), adapter=MemoryMcpAdapter("c"), entries=[]
    )
    assert headless.ambiguity_policy == "auto-pick-best"
    assert interactive.ambiguity_policy == "interactive"
    await headless.aclose()
    await interactive.aclose()
    with pytest.raises(ValueError, match="repeated: notes"):
        await mount_mcp(_glove(), MemoryMcpAdapter("c"), servers.entries() + servers.entries()[:1])


async def test_filter_and_wrap_apply_to_every_server(servers: Servers) -> None:
    wrapped: list[str] = []

    def wrap(tool: Tool, entry: McpCatalogueEntry) -> Tool:
        wrapped.append(entry.id)
        tool.description = f"[{entry.name}] {tool.description}"
        return tool

    glove = _glove()
    adapter = MemoryMcpAdapter("conv", active=["notes", "tracker"])
    async with await mount_mcp(
        glove,
        adapter=adapter,
        entries=servers.entries(),
        filter_tools=lambda ns, tool: tool.name.startswith(("read", "list")),
        wrap_tool=wrap,
    ):
        # Both servers declare resources but list none, so neither gets a reader.
        assert _names(glove) == {
            "notes__read_page",
            "notes__read_page_text",
            "tracker__list_issues",
        }
        mcp_tools = [t for t in glove.tools if t.name in _names(glove)]
        assert all(t.description.startswith("[") for t in mcp_tools)
    assert sorted(set(wrapped)) == ["notes", "tracker"]


async def test_duplicate_tool_names_fail_loudly_never_drop_a_tool() -> None:
    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        twice = SdkTool(name="same", input_schema={"type": "object"})
        return ListToolsResult(tools=[twice, twice])

    recorder = Recorder()
    glove = _glove()
    glove.add_subscriber(recorder)
    async with serve(Server("dupes", on_list_tools=list_tools)) as url:
        entries = [McpCatalogueEntry(id="dupes", name="D", description="d", url=url)]
        adapter = MemoryMcpAdapter("c", active=["dupes"])
        async with await mount_mcp(glove, adapter=adapter, entries=entries) as mount:
            assert mount.loaded == []
            with pytest.raises(McpActivationError, match="duplicate tool names: dupes__same"):
                await mount.activate("dupes")
    [failed, _] = recorder.of("mcp_server_failed")
    assert "duplicate" in failed.error
