"""Tools past a server's ``max_tools`` stay reachable: held, searchable by name and words through
``<id>__more_tools``, loaded on request as deferred tools (outside the cached prompt prefix),
and known to discovery. The model is told which tools are held and how to reach them.

(``tests/realservers/test_linear.py`` does the same against Linear's 198 tools.)"""

from __future__ import annotations

import functools
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server

from glove_core import Glove, ModelRequest, ScriptedModel, ToolCall, ToolResultData
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.mount import ListingLimits
from glove_mcp.subscribers import McpListingLimited
from glove_mcp.testing import serve

mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

_OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}}
_TOOLS = [
    ("list_issues", "List the issues of a project."),
    ("get_issue", "Read one issue."),
    ("list_projects", "List the projects."),
    ("get_viewer", "Who the token belongs to."),
    ("createCycle", "Start a new cycle (a sprint) for a team."),
    ("archiveInitiative", "Archive an initiative."),
    ("getCustomerNeeds", "List what customers asked for."),
]
LIMITS = ListingLimits(max_tools=4)


def _server(extra: tuple[tuple[str, str], ...] = (), *, resources: bool = False) -> Server[Any]:
    tools = [types.Tool(name=n, description=d, input_schema=_OBJECT) for n, d in (*_TOOLS, *extra)]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=f"ran {params.name}")])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="doc://a", name="a")])

    if resources:
        return Server(
            "tracker",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
        )
    return Server("tracker", on_list_tools=list_tools, on_call_tool=call_tool)


async def _run_once(script: list[Any], server: Server[Any]) -> Glove:
    """One request of ``script`` on an agent with ``server`` mounted as ``tracker``."""
    glove = Glove(model=ScriptedModel(script), system_prompt="t", server_mode=True)
    async with (
        serve(server) as url,
        await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter("conv", active=["tracker"]),
            entries=[McpCatalogueEntry(id="tracker", name="T", description="d", url=url)],
            listing_limits=LIMITS,
        ),
    ):
        await glove.build().process_request("go")
    return glove


def _results(glove: Glove) -> list[ToolResultData]:
    history = glove.model.requests[-1].messages  # type: ignore[attr-defined]
    return [r.result for m in history for r in (m.tool_results or [])]


def _note(request: ModelRequest) -> str:
    return "\n".join(m.text or "" for m in request.messages if "held back" in (m.text or ""))


async def test_held_tools_are_found_by_words_and_loaded_deferred() -> None:
    recorder = RecordingSubscriber()
    script: list[Any] = [
        [ToolCall(id="c1", name="tracker__more_tools", input={"query": "sprint cycle"})],
        [ToolCall(id="c2", name="tracker__more_tools", input={"load": ["createCycle"]})],
        [ToolCall(id="c3", name="tracker__createCycle", input={"x": "1"})],
        "done",
    ]
    glove = Glove(model=ScriptedModel(script), system_prompt="t", server_mode=True)
    glove.add_subscriber(recorder)
    adapter = MemoryMcpAdapter("conv", active=["tracker"])
    async with (
        serve(_server()) as url,
        await mount_mcp(
            glove,
            adapter=adapter,
            entries=[McpCatalogueEntry(id="tracker", name="T", description="d", url=url)],
            listing_limits=LIMITS,
        ) as mount,
    ):
        await glove.build().process_request("start a sprint")
        learned = await adapter.get_learned_tools()
        offered_now = set(mount.tool_names("tracker").values())
    first, second, third, last = glove.model.requests  # type: ignore[attr-defined]
    offered = [t.name for t in first.tools if t.name.startswith("tracker__")]
    assert offered == [
        "tracker__list_issues",
        "tracker__get_issue",
        "tracker__list_projects",
        "tracker__get_viewer",
        "tracker__more_tools",
    ]
    note = _note(first)
    assert "3 tools past that bound are held back" in note
    for name in ("tracker__createCycle", "tracker__archiveInitiative", "tracker__getCustomerNeeds"):
        assert name in note
    assert 'call tracker__more_tools with {"query": "a few words"}' in note
    [event] = recorder.of(McpListingLimited)
    assert event.held == (
        "tracker__createCycle",
        "tracker__archiveInitiative",
        "tracker__getCustomerNeeds",
    )
    found, loaded, ran = _results(glove)
    # Found by its words: the camelCase name and the description ("sprint").
    assert found.status == "success"
    assert found.data["tools"][0]["name"] == "tracker__createCycle"
    assert found.data["held_back"] == 3
    assert "tracker__createCycle" not in {t.name for t in second.tools}
    # Loaded by its real name; the result references it, so it is declared deferred.
    assert loaded.status == "success" and loaded.tool_references == ["tracker__createCycle"]
    assert "tracker__createCycle" in {t.name for t in third.tools}
    assert "tracker__createCycle" in third.deferred_tools
    assert ran.status == "success" and ran.data == "ran createCycle"
    assert "tracker__createCycle" in {t.name for t in last.tools}
    # Discovery knows every tool the server has, held ones included.
    assert {t.name for t in learned["tracker"]} >= {n for n, _ in _TOOLS}
    assert "createCycle" in offered_now and "archiveInitiative" not in offered_now


async def test_loading_a_tool_that_is_not_held_is_an_error_and_loads_nothing() -> None:
    script: list[Any] = [
        [ToolCall(id="c1", name="tracker__more_tools", input={"load": ["nope", "get_issue"]})],
        [ToolCall(id="c2", name="tracker__more_tools", input={})],
        "done",
    ]
    glove = await _run_once(script, _server())
    refused, listed = _results(glove)
    assert refused.status == "error"
    assert refused.message is not None
    assert "not held back by MCP server 'tracker': nope, get_issue" in refused.message
    assert not refused.tool_references
    # No query: every held tool, in the server's order.
    assert [row["name"] for row in listed.data["tools"]] == [
        "tracker__createCycle",
        "tracker__archiveInitiative",
        "tracker__getCustomerNeeds",
    ]
    last = glove.model.requests[-1]  # type: ignore[attr-defined]
    assert "tracker__createCycle" not in {t.name for t in last.tools}


async def test_no_held_tools_without_a_bound_reached_and_none_with_max_held_tools_zero() -> None:
    for limits, expected in (
        (ListingLimits(), 7),
        (ListingLimits(max_tools=4, max_held_tools=0), 4),
    ):
        glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
        async with (
            serve(_server()) as url,
            await mount_mcp(
                glove,
                adapter=MemoryMcpAdapter("conv", active=["tracker"]),
                entries=[McpCatalogueEntry(id="tracker", name="T", description="d", url=url)],
                listing_limits=limits,
            ) as mount,
        ):
            names = mount.tool_names("tracker")
        assert len(names) == expected and "tracker__more_tools" not in names


async def test_a_server_with_its_own_more_tools_keeps_it_and_the_finder_takes_another_name() -> (
    None
):
    # The server's own ``more_tools`` is held (past max_tools): the finder must not collide
    # with it (the mount failed with "duplicate tool names"), and it stays loadable.
    own = (("more_tools", "The server's own tool of that name."),)
    script: list[Any] = [
        [ToolCall(id="c1", name="tracker__more_tools_2", input={"load": ["more_tools"]})],
        [ToolCall(id="c2", name="tracker__more_tools", input={"x": "1"})],
        "done",
    ]
    glove = await _run_once(script, _server(own))
    first = glove.model.requests[0]  # type: ignore[attr-defined]
    offered = [t.name for t in first.tools if t.name.startswith("tracker__")]
    assert offered[-1] == "tracker__more_tools_2"
    assert "tracker__more_tools" not in offered
    assert 'call tracker__more_tools_2 with {"query": "a few words"}' in _note(first)
    loaded, ran = _results(glove)
    assert loaded.tool_references == ["tracker__more_tools"]
    assert ran.status == "success" and ran.data == "ran more_tools"


async def test_a_held_tool_named_read_resource_keeps_its_name_and_the_server_still_mounts() -> None:
    # The mount's resource reader is left out where the server has a tool of that name, held
    # ones included (a held ``read_resource`` made two tools of one bridged name).
    own = (("read_resource", "The server's own reader."),)
    script: list[Any] = [
        [ToolCall(id="c1", name="tracker__more_tools", input={"load": ["read_resource"]})],
        [ToolCall(id="c2", name="tracker__read_resource", input={"x": "1"})],
        "done",
    ]
    glove = await _run_once(script, _server(own, resources=True))
    first = glove.model.requests[0]  # type: ignore[attr-defined]
    assert "tracker__read_resource" not in {t.name for t in first.tools}
    loaded, ran = _results(glove)
    assert loaded.tool_references == ["tracker__read_resource"]
    assert ran.status == "success" and ran.data == "ran read_resource"
