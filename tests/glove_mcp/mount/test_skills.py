"""Skills as capabilities, against FastMCP 4 (``tests/interop/fastmcp``): a connected server's
skills in discovery's rows and in ``find_capability``'s result, ``<id>__use_skill`` loading
one, its instructions kept as history context, its files read with ``<id>__read_resource``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from glove_core import Glove, MemoryStore, Message, ScriptedModel, ToolCall, ToolResultData
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.mount.skills import SKILLS_KEY
from tests.interop.fastmcp.server import fastmcp_server

INSTRUCTION = "Group the changes by kind"


def call(tool: str, call_id: str, **input: Any) -> ToolCall:
    return ToolCall(id=call_id, name=tool, input=input)


def results(messages: list[Message]) -> list[ToolResultData]:
    return [r.result for m in messages for r in (m.tool_results or [])]


@pytest.fixture(scope="module")
def fastmcp_url() -> Iterator[str]:
    with fastmcp_server() as url:
        yield url


def entry(url: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id="fm", name="Releases", url=url, description="Counters and release notes."
    )


async def test_skills_are_found_picked_kept_as_context_and_their_files_read(
    fastmcp_url: str,
) -> None:
    model = ScriptedModel(
        [
            [call(FIND_CAPABILITY, "m1", need="write release notes")],
            [call("activate", "s1", id="fm")],
            [call("list_capabilities", "s2", query="release notes")],
            "Activated fm.",
            [call("fm__use_skill", "m2", name="release-notes")],
            [call("fm__read_resource", "m3", uri="skill://release-notes/template.md")],
            "Notes written.",
            "Second turn.",
            "Third turn.",
        ]
    )
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="main", store=store, server_mode=True)
    async with await mount_mcp(glove, MemoryMcpAdapter("conv"), [entry(fastmcp_url)]) as mount:
        glove.build()
        first = await glove.process_request("write the release notes for 2.0")

        assert [s.name for s in mount.skills("fm")] == ["release-notes"]
        sub = [r for r in model.requests if r.system != "main"]
        activated = sub[1].messages[-1].tool_results
        assert activated is not None
        assert activated[0].result.data["skills"][0]["name"] == "release-notes"
        listed = sub[2].messages[-1].tool_results
        assert listed is not None
        row = listed[0].result.data[0]
        assert row["id"] == "fm"
        assert row["skills"] == [
            {
                "name": "release-notes",
                "description": "Write release notes for a version from the merged changes.",
            }
        ]
        found, used, read = results(first.messages)
        assert "Skills of fm: release-notes" in found.data
        assert "fm__use_skill" in found.data
        assert used.status == "success" and INSTRUCTION in used.data
        assert "skill://release-notes/template.md" in used.data
        assert "fm__read_resource" in used.data
        assert "name: release-notes" not in used.data  # the frontmatter is taken off
        assert read.status == "success" and "### Added" in read.data

        saved_before = list(await store.get_messages())
        await glove.process_request("and now?")
        saved = list(await store.get_messages())
        # The instructions arrive as history context: one message appended after everything
        # saved before (nothing earlier changes, so the cached prefix stays), before the
        # request's own message.
        assert saved[: len(saved_before)] == saved_before
        context = saved[len(saved_before)]
        assert f'<context key="{SKILLS_KEY}">' in context.text
        assert INSTRUCTION in context.text
        assert saved[len(saved_before) + 1].text == "and now?"
        main = [r for r in model.requests if r.system == "main"]
        assert any(INSTRUCTION in m.text for m in main[-1].messages)

        # Unchanged, it is not saved again.
        count = len(saved)
        await glove.process_request("and then?")
        again = list(await store.get_messages())
        assert not any(SKILLS_KEY in m.text for m in again[count:])


async def test_a_server_switched_off_takes_its_skills_out_of_the_context(
    fastmcp_url: str,
) -> None:
    model = ScriptedModel(
        [[call("fm__use_skill", "m1", name="release-notes")], "ok", "next", "done"]
    )
    store = MemoryStore()
    glove = Glove(model=model, system_prompt="main", store=store, server_mode=True)
    adapter = MemoryMcpAdapter("conv")
    await adapter.activate("fm")
    async with await mount_mcp(glove, adapter, [entry(fastmcp_url)]) as mount:
        glove.build()
        await glove.process_request("use the skill")
        unknown = await glove.run_tool("fm__use_skill", {"name": "no-such-skill"})
        assert unknown.status == "error" and "release-notes" in (unknown.message or "")
        await glove.process_request("next")  # the skill is saved as context now
        await mount.deactivate("fm")
        await glove.process_request("go on")
        texts = [m.text for m in await store.get_messages()]
        assert any(f'<context key="{SKILLS_KEY}" status="cleared" />' in t for t in texts)
