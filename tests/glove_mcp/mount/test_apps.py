"""MCP Apps on a mount, against FastMCP 4 (``tests/interop/fastmcp``): with ``apps=True`` a
tool's result carries its view, tools for views alone stay away from the model and run with
``Glove.run_tool`` after the person's permission; without, nothing of it shows."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from glove_core import Glove, MemoryStore, ScriptedModel, Slot, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.extensions.apps import APP_KEY
from tests.interop.fastmcp.server import fastmcp_server


@pytest.fixture(scope="module")
def fastmcp_url() -> Iterator[str]:
    with fastmcp_server() as url:
        yield url


async def mounted(url: str, *, apps: bool, server_mode: bool = True) -> tuple[Glove, Any]:
    model = ScriptedModel([[ToolCall(id="m1", name="fm__show_counter", input={})], "shown"])
    glove = Glove(model=model, system_prompt="main", store=MemoryStore(), server_mode=server_mode)
    adapter = MemoryMcpAdapter("conv")
    await adapter.activate("fm")
    entry = McpCatalogueEntry(id="fm", name="Counter", url=url, description="A counter.")
    mount = await mount_mcp(glove, adapter, [entry], apps=apps)
    glove.build()
    return glove, mount


async def test_a_tool_result_carries_its_view_and_app_tools_stay_off_the_model(
    fastmcp_url: str,
) -> None:
    glove, mount = await mounted(fastmcp_url, apps=True)
    async with mount:
        names = {t.name for t in glove.tools}
        assert "fm__show_counter" in names and "fm__increment" not in names
        assert set(mount.app_tools()) == {"fm__increment"}
        result = await glove.process_request("show the counter")
        shown = next(m.tool_results for m in result.messages if m.tool_results)
        render = shown[0].result.render_data
        assert render["content"] == [{"type": "text", "text": "The counter is at 0."}]
        view = render[APP_KEY]
        assert view["server"] == "fm" and view["tool"] == "fm__show_counter"
        assert view["uri"] == "ui://counter/view.html"
        assert "<button" in view["html"] and view["csp"] == {}
        assert view["app_tools"] == {
            "show_counter": "fm__show_counter",
            "increment": "fm__increment",
            "show_hostile": "fm__show_hostile",
        }
        assert view["tool_result"]["content"][0]["text"] == "The counter is at 0."
        # The model sees the tool's text only.
        main = glove.model.requests[-1]  # type: ignore[attr-defined]
        assert not any("<button" in m.text for m in main.messages)


async def test_without_apps_nothing_of_them_shows(fastmcp_url: str) -> None:
    glove, mount = await mounted(fastmcp_url, apps=False)
    async with mount:
        assert "fm__increment" not in {t.name for t in glove.tools}
        assert mount.app_tools() == {}
        result = await glove.process_request("show the counter")
        shown = next(m.tool_results for m in result.messages if m.tool_results)
        assert shown[0].result.render_data == [{"type": "text", "text": "The counter is at 0."}]


async def test_an_app_tool_runs_only_after_the_person_allows_it(fastmcp_url: str) -> None:
    glove, mount = await mounted(fastmcp_url, apps=True, server_mode=False)
    asked: list[Slot] = []
    answers = iter([{"granted": False, "remember": False}, True])

    def answer(slots: list[Slot]) -> None:
        for slot in slots:
            if slot.kind == "wait" and slot not in asked:
                asked.append(slot)
                value = next(answers)
                asyncio.get_running_loop().call_soon(glove.display_manager.resolve, slot.id, value)

    glove.display_manager.subscribe(answer)
    async with mount:
        denied = await glove.run_tool("fm__increment", {}, requested_by="the view of fm")
        assert denied.status == "error" and "denied" in (denied.message or "")
        assert asked[0].renderer == "permission_request"
        assert asked[0].input["requested_by"] == "the view of fm"
        ran = await glove.run_tool("fm__increment", {}, requested_by="the view of fm")
        assert ran.status == "success"
        assert ran.render_data["structured_content"]["count"] >= 1
        assert len(asked) == 2
        unknown = await glove.run_tool("fm__nothing", {})
        assert unknown.status == "error" and "unknown tool" in (unknown.message or "")
