"""Interop: elicitations of the reference TypeScript server
``@modelcontextprotocol/server-everything`` (over stdio), answered by ``answer_elicitation`` in a
raw ``ClientSession``: its form of every field kind (defaults, formats, titled and legacy
enums, multi-selects), from a handler and from the terminal prompter, and its URL elicitation.

The server lists ``trigger-elicitation-request`` and ``trigger-url-elicitation`` only to clients
that declare elicitation, which a session with an ``elicitation_callback`` does.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from glove_core import DisplayManager
from glove_mcp.cli.console_prompts import ElicitationPrompter
from glove_mcp.connect.elicitation import OnElicitation, answer_elicitation

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node" / "bin" / "node"
EVERYTHING = HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

_missing = [f"tests/interop/{p.relative_to(HERE)}" for p in (NODE, EVERYTHING) if not p.is_file()]
if _missing:
    _why = f"server-everything is not installed (missing: {', '.join(_missing)})"
    if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
        pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {_why}", pytrace=False)
    pytest.skip(_why, allow_module_level=True)

# The defaults of the server's form, as the server must receive them when left out.
FORM_DEFAULTS = {
    "firstLine": "It was a dark and stormy night.",
    "integer": 42,
    "number": 3.14,
    "untitledSingleSelectEnum": "Monica",
    "untitledMultipleSelectEnum": ["Guitar"],
    "titledSingleSelectEnum": "hero-1",
    "titledMultipleSelectEnum": ["fish-1"],
    "legacyTitledEnum": "pet-1",
}


async def call(
    tool: str,
    arguments: dict[str, Any],
    *,
    on_elicitation: OnElicitation | None = None,
    display: DisplayManager | None = None,
) -> str:
    """Call ``tool`` on a fresh server-everything; returns the text of its result."""

    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await answer_elicitation(
            "everything",
            params,
            on_elicitation=on_elicitation,
            display=display,
            server_mode=False,
            timeout=20,
        )

    server = StdioServerParameters(command=str(NODE), args=[str(EVERYTHING), "stdio"])
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, elicitation_callback=callback) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, arguments)
    assert not result.is_error, result
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def raw_result(text: str) -> Any:
    return json.loads(text.split("Raw result:", 1)[1])


async def test_a_handlers_answer_arrives_with_every_default() -> None:
    answer = {"action": "accept", "content": {"name": "Ada Lovelace", "email": "ada@example.com"}}
    text = await call("trigger-elicitation-request", {}, on_elicitation=lambda request: answer)
    assert raw_result(text) == {
        "action": "accept",
        "content": {"name": "Ada Lovelace", "email": "ada@example.com", **FORM_DEFAULTS},
    }


async def test_the_terminal_prompter_fills_in_the_servers_form() -> None:
    display = DisplayManager()
    typed = [
        "Ada",  # name
        "yes",  # check
        "",  # firstLine: the default
        "ada@example.com",
        "https://ada.example",  # homepage
        "1815-12-10",  # birthdate
        "",  # integer: the default
        "7.5",  # number
        "Joey",  # untitled single select, by value
        "Piano, 3",  # untitled multi select, by value and by number
        "Wonder Woman",  # titled single select, by title
        "",  # titled multi select: the default
        "Dogs",  # legacy titled enum, by its enumName
    ]
    out = io.StringIO()
    prompter = ElicitationPrompter(display, out, io.StringIO("\n".join(typed) + "\n").readline)
    prompter.attach()
    text = await call("trigger-elicitation-request", {}, display=display)
    await prompter.drain()
    assert raw_result(text)["content"] == {
        "name": "Ada",
        "check": True,
        "firstLine": "It was a dark and stormy night.",
        "email": "ada@example.com",
        "homepage": "https://ada.example",
        "birthdate": "1815-12-10",
        "integer": 42,
        "number": 7.5,
        "untitledSingleSelectEnum": "Joey",
        "untitledMultipleSelectEnum": ["Piano", "Violin"],
        "titledSingleSelectEnum": "hero-3",
        "titledMultipleSelectEnum": ["fish-1"],
        "legacyTitledEnum": "pet-2",
    }
    assert "[everything] asks: Please provide inputs for the following fields:" in out.getvalue()


async def test_a_url_elicitation_carries_its_url_and_id() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"action": "accept"}

    text = await call(
        "trigger-url-elicitation",
        {"url": "https://example.com/connect", "elicitationId": "el-42"},
        on_elicitation=handler,
    )
    assert "User completed the URL elicitation flow" in text
    assert seen == [
        {
            "server": "everything",
            "mode": "url",
            "message": "Please open the link to complete this action.",
            "url": "https://example.com/connect",
            "host": "example.com",
            "elicitation_id": "el-42",
        }
    ]
