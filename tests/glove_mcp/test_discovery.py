"""find_capability end to end: ScriptedModel drives the main agent and the discovery subagent
against the local MCP servers over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from glove_core import (
    Glove,
    MemoryStore,
    Message,
    ModelRequest,
    ScriptedModel,
    Slot,
    ToolCall,
    ToolResultData,
)
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, SqliteMcpAdapter, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY, MCP_PICKER, policy_prompt
from glove_mcp.testing import ServerControl, serve


def call(name: str, call_id: str, **input: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, input=input)


def results(messages: list[Message]) -> list[ToolResultData]:
    return [r.result for m in messages for r in (m.tool_results or [])]


@pytest.fixture
async def catalogue() -> AsyncIterator[list[McpCatalogueEntry]]:
    async with serve("notes") as notes_url, serve("tracker") as tracker_url:
        yield [
            McpCatalogueEntry(
                id="notes",
                name="Notes",
                url=notes_url,
                tags=["docs", "wiki"],
                description="Search, read, create and update pages of notes.",
            ),
            McpCatalogueEntry(
                id="tracker",
                name="Tracker",
                url=tracker_url,
                tags=["issues", "tickets"],
                description="List, create, update and delete issues in a bug tracker.",
            ),
        ]


async def test_find_capability_activates_tracker_and_main_agent_uses_it(
    catalogue: list[McpCatalogueEntry],
) -> None:
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="list the open issues in the bug tracker")],
            [call("list_capabilities", "s1", query="bug tracker issues")],
            [call("activate", "s2", id="tracker")],
            "Activated tracker.",
            [call("tracker__list_issues", "m2")],
            "There are open issues.",
        ]
    )
    store = MemoryStore()
    adapter = MemoryMcpAdapter("conv")
    glove = Glove(model=model, system_prompt="main", store=store, server_mode=True)
    async with await mount_mcp(glove, adapter=adapter, entries=catalogue) as mount:
        glove.build()
        result = await glove.process_request("what's open in the tracker?")

        assert result.text == "There are open issues."
        assert mount.loaded == ["tracker"]
        assert await adapter.get_active() == ["tracker"]
        main_calls = [r for r in model.requests if r.system == "main"]
        first_tools = {t.name for t in main_calls[0].tools}
        assert FIND_CAPABILITY in first_tools
        assert not any(n.startswith("tracker__") for n in first_tools)
        assert "tracker__list_issues" in {t.name for t in main_calls[1].tools}

        sub_requests = [r for r in model.requests if r.system != "main"]
        sub_tools = {t.name for t in sub_requests[0].tools}
        assert sub_tools == {"list_capabilities", "activate", "deactivate"}  # no ask_user
        listed = sub_requests[1].messages[-1].tool_results
        assert listed is not None
        rows = listed[0].result.data
        assert rows[0]["id"] == "tracker" and rows[0]["active"] is False

        found, issues = results(result.messages)
        assert found.status == "success"
        assert "tracker__list_issues" in found.data
        assert "available from your next step" in found.data
        assert issues.status == "success"


async def test_interactive_policy_asks_the_user_through_the_display(
    catalogue: list[McpCatalogueEntry],
) -> None:
    asked: list[Slot] = []
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="write things down")],
            [call("ask_user", "s1", question="Which one?", options=["notes", "tracker"])],
            lambda request: [call("activate", "s2", id=_chosen(request))],
            "Activated notes.",
            "Done.",
        ]
    )
    glove = Glove(model=model, system_prompt="main")

    def pick_notes(slots: list[Slot]) -> None:
        for slot in slots:
            if slot.renderer == MCP_PICKER and slot not in asked:
                asked.append(slot)
                glove.display_manager.resolve(slot.id, "notes")

    glove.display_manager.subscribe(pick_notes)
    async with await mount_mcp(glove, adapter=MemoryMcpAdapter("c"), entries=catalogue) as mount:
        glove.build()
        await glove.process_request("take a note")
        assert mount.loaded == ["notes"]
    assert asked[0].input["question"] == "Which one?"
    assert [o["id"] for o in asked[0].input["options"]] == ["notes", "tracker"]


def _chosen(request: ModelRequest) -> str:
    last = request.messages[-1].tool_results
    assert last is not None
    chosen = last[0].result.data["user_chose"]
    assert isinstance(chosen, str)
    return chosen


async def test_defer_to_main_activates_nothing(catalogue: list[McpCatalogueEntry]) -> None:
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="track bugs")],
            "tracker — Tracker: issues and bugs",
            "I can use the tracker if you want.",
        ]
    )
    glove = Glove(model=model, system_prompt="main")
    async with await mount_mcp(
        glove, adapter=MemoryMcpAdapter("c"), entries=catalogue, ambiguity_policy="defer-to-main"
    ) as mount:
        glove.build()
        result = await glove.process_request("can you track bugs?")
        assert mount.loaded == []
    sub = next(r for r in model.requests if r.system != "main")
    assert {t.name for t in sub.tools} == {"list_capabilities"}
    (found,) = results(result.messages)
    assert "tracker — Tracker" in found.data and "Nothing was activated" in found.data


async def test_activation_failures_leave_nothing_mounted(
    catalogue: list[McpCatalogueEntry],
) -> None:
    control = ServerControl(tokens={"valid"})
    async with serve("tracker", control=control) as locked_url:
        locked = McpCatalogueEntry(
            id="locked", name="Locked", url=locked_url, description="A tracker that needs a login."
        )
        down = McpCatalogueEntry(
            id="down",
            name="Down",
            url="http://127.0.0.1:9/mcp",
            description="A server that is not running.",
        )
        model = ScriptedModel(
            [
                [call(FIND_CAPABILITY, "m1", need="x")],
                [
                    call("activate", "s1", id="locked"),
                    call("activate", "s2", id="down"),
                    call("activate", "s3", id="ghost"),
                    call("activate", "s4", id="notes"),
                    call("activate", "s5", id="notes"),
                ],
                "done",
                "ok",
            ]
        )
        glove = Glove(model=model, system_prompt="main", server_mode=True)
        adapter = MemoryMcpAdapter("c")
        entries = [*catalogue, locked, down]
        async with await mount_mcp(glove, adapter=adapter, entries=entries) as mount:
            glove.build()
            await glove.process_request("go")
            assert mount.loaded == ["notes"]
            assert await adapter.get_active() == ["notes"]
            names = {t.name for t in glove.tools}
            assert not any(n.startswith(("locked__", "down__")) for n in names)
    sub = [r for r in model.requests if r.system != "main"]
    outcome = sub[1].messages[-1].tool_results
    assert outcome is not None
    login, refused, unknown, ok, again = (r.result for r in outcome)
    assert login.status == "error" and login.message is not None
    assert "glove-mcp auth locked" in login.message
    assert refused.status == "error" and "nothing was activated" in (refused.message or "")
    assert unknown.message is not None and "unknown id 'ghost'" in unknown.message
    assert ok.status == "success" and again.data == ok.data  # re-activating is a no-op


async def test_adapter_state_survives_a_restart(
    catalogue: list[McpCatalogueEntry], tmp_path: Path
) -> None:
    path = tmp_path / "conv.db"
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="notes")],
            [call("activate", "s1", id="notes")],
            "ok",
            "done",
        ]
    )
    first = Glove(model=model, system_prompt="main", server_mode=True)
    async with await mount_mcp(first, adapter=SqliteMcpAdapter(path, "conv"), entries=catalogue):
        first.build()
        await first.process_request("go")

    second = Glove(model=ScriptedModel([]), system_prompt="main", server_mode=True)
    async with await mount_mcp(
        second, adapter=SqliteMcpAdapter(path, "conv"), entries=catalogue
    ) as mount:
        assert mount.loaded == ["notes"]
        assert "notes__search_pages" in {t.name for t in second.tools}


async def test_deactivate_switches_the_servers_tools_off(
    catalogue: list[McpCatalogueEntry],
) -> None:
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="notes")],
            [call("activate", "s1", id="notes")],
            "ok",
            [call(FIND_CAPABILITY, "m2", need="stop using notes")],
            [call("deactivate", "s2", id="notes")],
            "ok",
            [call("notes__search_pages", "m3", query="x")],
            "done",
        ]
    )
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="main", store=store, server_mode=True)
    adapter = MemoryMcpAdapter("c")
    async with await mount_mcp(glove, adapter=adapter, entries=catalogue) as mount:
        glove.build()
        await glove.process_request("go")
        assert mount.loaded == []
        assert await adapter.get_active() == []
    *_, last = results(await store.get_messages())
    assert last.message is not None and last.message.startswith("tool_inactive")


def test_small_catalogues_are_inlined_large_ones_searched() -> None:
    small = [McpCatalogueEntry(id="a", name="A", url="http://x", description="alpha")]
    assert "- a — A: alpha" in policy_prompt("interactive", small, set())
    big = [
        McpCatalogueEntry(id=f"s{i}", name=f"S{i}", url="http://x", description="d" * 200)
        for i in range(200)
    ]
    prompt = policy_prompt("auto-pick-best", big, set(), budget_tokens=3000)
    assert "call list_capabilities" in prompt and "s199" not in prompt
    with pytest.raises(KeyError):
        policy_prompt("bogus", small, set())


async def test_find_capability_rejects_an_empty_need(catalogue: list[McpCatalogueEntry]) -> None:
    model = ScriptedModel([[call(FIND_CAPABILITY, "m1", need="")], "sorry"])
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="main", store=store)
    async with await mount_mcp(glove, adapter=MemoryMcpAdapter("c"), entries=catalogue):
        glove.build()
        await asyncio.wait_for(glove.process_request("go"), 10)
    (result,) = results(await store.get_messages())
    assert result.status == "error" and "need" in (result.message or "")


async def test_reactivation_after_a_restart_switches_tools_back_on(
    catalogue: list[McpCatalogueEntry], tmp_path: Path
) -> None:
    from glove_core import SqliteStore

    path = tmp_path / "conv.db"
    async with SqliteStore(path, "conv") as store:
        first = Glove(model=ScriptedModel(["ok"]), system_prompt="main", store=store)
        async with await mount_mcp(
            first, adapter=SqliteMcpAdapter(path, "conv"), entries=catalogue
        ) as mount:
            first.build()
            await mount.activate("notes")
            await mount.deactivate("notes")
            await first.process_request("saves the switch")

    async with SqliteStore(path, "conv") as store:
        model = ScriptedModel([[call("notes__search_pages", "m1", query="x")], "done"])
        second = Glove(model=model, system_prompt="main", store=store, server_mode=True)
        async with await mount_mcp(
            second, adapter=SqliteMcpAdapter(path, "conv"), entries=catalogue
        ) as mount:
            second.build()
            assert mount.loaded == []
            await mount.activate("notes")
            result = await second.process_request("search")
    (searched,) = results(result.messages)
    assert searched.status == "success"


async def test_budget_and_known_tool_names_reach_the_subagent(
    catalogue: list[McpCatalogueEntry],
) -> None:
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="x")],
            [call("list_capabilities", "s1", query="delete_issue")],
            "tracker already does that",
            "ok",
        ]
    )
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    adapter = MemoryMcpAdapter("c", active=["tracker"])
    async with await mount_mcp(
        glove, adapter=adapter, entries=catalogue, discovery_budget_tokens=1
    ):
        glove.build()
        await glove.process_request("go")
    sub = [r for r in model.requests if r.system != "main"]
    assert "call list_capabilities" in sub[0].system  # the catalogue did not fit the budget
    listed = sub[1].messages[-1].tool_results
    assert listed is not None
    assert listed[0].result.data[0]["id"] == "tracker"  # found by a tool name of a loaded server
