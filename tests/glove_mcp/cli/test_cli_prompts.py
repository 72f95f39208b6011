"""The chat's /prompts and /prompt commands against the docs server and a server without
prompts, mounted for real."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import pytest

from glove_core import Glove, ScriptedModel
from glove_mcp import McpCatalogueEntry, McpMount, MemoryMcpAdapter, mount_mcp
from glove_mcp._cli_prompts import handle_prompt_command
from glove_mcp.testing import build_docs_server, build_paged_server, serve


@pytest.fixture
async def mount() -> AsyncIterator[McpMount]:
    async with serve(build_docs_server()) as docs, serve(build_paged_server(1)) as bare:
        entries = [
            McpCatalogueEntry(id="docs", name="Docs", description="d", url=docs),
            McpCatalogueEntry(id="bare", name="Bare", description="b", url=bare),
        ]
        glove = Glove(model=ScriptedModel([]), system_prompt="test", server_mode=True)
        adapter = MemoryMcpAdapter("chat", active=["docs", "bare"])
        async with await mount_mcp(glove, adapter, entries) as mounted:
            yield mounted


async def test_prompts_lists_every_loaded_servers_prompts(mount: McpMount) -> None:
    out = io.StringIO()
    assert await handle_prompt_command("/prompts", mount, out) is None
    lines = sorted(out.getvalue().splitlines())
    assert lines == [
        "bare: offers no prompts",
        "docs greet — Say hello.",
        "docs summarize topic=… [style=…] — Ask for a summary of the docs on ``topic``.",
    ]


async def test_prompt_sends_the_filled_in_text(mount: McpMount) -> None:
    out = io.StringIO()
    request = await handle_prompt_command(
        '/prompt docs summarize topic="the login" style=long', mount, out
    )
    assert request == (
        "Summarize the docs about the login, long style.\n\n"
        "Which pages should I read?\n\n"
        "Start with docs://page/intro."
    )
    assert out.getvalue() == ""
    assert await handle_prompt_command("/prompt docs greet", mount, out) == "Hello, docs!"


async def test_other_lines_pass_through(mount: McpMount) -> None:
    out = io.StringIO()
    assert await handle_prompt_command("hello /prompt", mount, out) == "hello /prompt"
    assert await handle_prompt_command("/promptly", mount, out) == "/promptly"
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("/prompt", "usage: /prompt <server> <name> [key=value ...]"),
        ("/prompt docs", "usage: /prompt <server> <name>"),
        ("/prompt docs summarize topic", "arguments are key=value, not 'topic'"),
        ('/prompt docs summarize topic="open', "cannot read the arguments (No closing quotation)"),
        ("/prompt docs nope", "It offers no prompt 'nope' (prompts: 'summarize', 'greet')"),
        ("/prompt docs summarize style=long", "missing required argument(s) 'topic'"),
        ("/prompt bare greet", "MCP server 'bare' does not offer prompts"),
        ("/prompt ghost greet", "'ghost' could not be activated: it is not in the catalogue"),
    ],
)
async def test_bad_commands_say_what_is_wrong(mount: McpMount, line: str, error: str) -> None:
    out = io.StringIO()
    assert await handle_prompt_command(line, mount, out) is None
    written = out.getvalue()
    assert written.startswith("error: ")
    assert error in written
