"""Issue 16, item 9: bridged names collided across servers.

Ids ``a`` and ``a_`` with tools ``_b`` and ``b`` both became ``a___b``: the first server to
mount took the name and answered the other's calls. Catalogue ids may no longer end in ``_``
(nor contain ``__``, nor exceed 40 characters), so the first ``__`` of a bridged name always
ends the id and no two servers can share a name; ordinary names did not change."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.lowlevel.server import Server
from pydantic import ValidationError

from glove_core import Glove, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.catalogue import MAX_ID_LENGTH
from glove_mcp.cli.config import CatalogueFileError, load_catalogue
from glove_mcp.mount.bridge import bridged_tool_name, split_bridged_name
from glove_mcp.testing import serve

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _entry(id: str, url: str = "http://127.0.0.1:9/mcp") -> McpCatalogueEntry:
    return McpCatalogueEntry(id=id, name=id, description="d", url=url)


def _is_id(value: str) -> bool:
    try:
        _entry(value)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("bad", ["a_", "notes_", "a\n", "x" * (MAX_ID_LENGTH + 1)])
def test_ids_that_would_make_names_ambiguous_are_refused(bad: str) -> None:
    with pytest.raises(ValidationError, match=r"catalogue id .* is invalid.*no '_' at the end"):
        _entry(bad)


def test_the_catalogue_file_refuses_them_too(tmp_path: Path) -> None:
    file = tmp_path / "servers.toml"
    file.write_text(
        "[[servers]]\nid = 'a'\nname = 'A'\ndescription = 'd'\nurl = 'http://x/mcp'\n\n"
        "[[servers]]\nid = 'a_'\nname = 'A'\ndescription = 'd'\nurl = 'http://x/mcp'\n",
        encoding="utf-8",
    )
    with pytest.raises(CatalogueFileError, match=r"server #2 \('a_'\): id: .*'a_' is invalid"):
        load_catalogue(file)


def test_ordinary_and_sanitised_names_are_what_they_were() -> None:
    # Saved conversations name tools this way: the names must not move.
    assert bridged_tool_name("notion", "search") == "notion__search"
    assert bridged_tool_name("notion", "pages.search") == "notion__pages_search_66ef3032"
    assert split_bridged_name("notion__search") == ("notion", "search")
    assert split_bridged_name("find_capability") is None


def _echo_server(server: str, tools: list[str]) -> Server[Any]:
    """A server whose tools answer with the server's name, so a test sees who answered."""
    listed = [types.Tool(name=n, input_schema={"type": "object"}) for n in tools]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=f"{server}:{params.name}")])

    return Server(server, on_list_tools=list_tools, on_call_tool=call_tool)


async def test_look_alike_names_of_two_servers_each_reach_their_own_server() -> None:
    """``a`` lists ``_b``, ``b`` and ``-__b``; ``a-`` lists ``b`` and ``_b``: five distinct
    names, and each call is answered by the server that listed the tool."""
    a_tools, dash_tools = ["_b", "b", "-__b"], ["b", "_b"]
    async with (
        serve(_echo_server("a", a_tools)) as a_url,
        serve(_echo_server("a-", dash_tools)) as dash_url,
    ):
        expected = {bridged_tool_name("a", t): f"a:{t}" for t in a_tools}
        expected |= {bridged_tool_name("a-", t): f"a-:{t}" for t in dash_tools}
        assert len(expected) == 5
        calls = [ToolCall(id=f"c{i}", name=n, input={}) for i, n in enumerate(expected)]
        glove = Glove(model=ScriptedModel([calls, "done"]), system_prompt="t", server_mode=True)
        adapter = MemoryMcpAdapter("conv", active=["a", "a-"])
        entries = [_entry("a", a_url), _entry("a-", dash_url)]
        async with await mount_mcp(glove, adapter=adapter, entries=entries) as mount:
            assert sorted(mount.loaded) == ["a", "a-"]
            result = await glove.build().process_request("call them all")
    answers = {r.name: r.result.data for m in result.messages for r in (m.tool_results or [])}
    assert answers == expected


_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,44}", fullmatch=True).filter(_is_id)
_tools = st.one_of(
    st.text(alphabet="_-ab", min_size=1, max_size=8),  # separators everywhere
    st.text(min_size=1, max_size=90),  # anything, including what must be sanitised or cut
)


@given(st.lists(st.tuples(_ids, _tools), unique=True, min_size=1, max_size=30))
def test_bridged_names_are_distinct_valid_and_decode_to_their_server(
    pairs: list[tuple[str, str]],
) -> None:
    names = {bridged_tool_name(id, tool): (id, tool) for id, tool in pairs}
    assert len(names) == len(pairs)  # injective: no two (server, tool) pairs share a name
    for name, (id, tool) in names.items():
        assert _VALID.fullmatch(name)
        split = split_bridged_name(name)
        assert split is not None and split[0] == id
        plain = f"{id}__{tool}"
        if _VALID.fullmatch(plain):
            assert name == plain and split == (id, tool)
