"""Issue 16, item 10: a mounted server's calls could take 300 s, fixed.

A hung server held the conversation's turn for five minutes. ``call_timeout`` is now set per
mount (``mount_mcp(call_timeout=...)``) and per server (``McpCatalogueEntry(call_timeout=...)``,
which wins): the hung call becomes a tool error naming the server and the timeout, and the
conversation's next request works (the connection reconnects)."""

from __future__ import annotations

import asyncio
import functools
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from glove_core import Glove, RequestResult, ScriptedModel, ToolCall, ToolResultData
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.cli.config import CatalogueFileError, load_catalogue
from glove_mcp.testing import serve
from tests.glove_mcp.connect.probe_server import build_probe_server

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

# A guard, not a timing assert: a timeout that was not applied would hang for 300 s.
_GUARD = 30

_HANG = {"n": 1, "pause": 600}  # the probe's steps tool reports once, then sleeps
_QUICK = {"n": 1, "pause": 0}


def _results(result: RequestResult) -> list[ToolResultData]:
    return [r.result for m in result.messages for r in (m.tool_results or [])]


async def _hang_then_recover(url: str, entry_timeout: float | None, **mount: Any) -> str:
    """Call the hanging tool, then (next request) a quick one; returns the first error."""
    script: list[Any] = [
        [ToolCall(id="c1", name="slow__steps", input=_HANG)],
        "it timed out",
        [ToolCall(id="c2", name="slow__steps", input=_QUICK)],
        "done",
    ]
    glove = Glove(model=ScriptedModel(script), system_prompt="t", server_mode=True)
    entry = McpCatalogueEntry(
        id="slow", name="Slow", description="d", url=url, call_timeout=entry_timeout
    )
    adapter = MemoryMcpAdapter("conv", active=["slow"])
    async with await mount_mcp(glove, adapter=adapter, entries=[entry], **mount):
        glove.build()
        [hung] = _results(await asyncio.wait_for(glove.process_request("hang"), _GUARD))
        [quick] = _results(await asyncio.wait_for(glove.process_request("again"), _GUARD))
    assert hung.status == "error"
    assert quick.status == "success" and quick.data == {"result": "1 steps done"}
    assert hung.message is not None
    return hung.message


async def test_the_entry_timeout_ends_a_hung_call_and_the_next_request_works() -> None:
    async with serve(build_probe_server()) as url:
        message = await _hang_then_recover(url, 0.5, call_timeout=120)
    assert "MCP server 'slow'" in message and "within 0.5 s" in message


async def test_the_mount_timeout_applies_when_the_entry_sets_none() -> None:
    async with serve(build_probe_server()) as url:
        message = await _hang_then_recover(url, None, call_timeout=0.4)
    assert "MCP server 'slow'" in message and "within 0.4 s" in message


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan, True, "5"])
def test_bad_entry_timeouts_are_refused(bad: Any) -> None:
    with pytest.raises(ValidationError, match="call_timeout must be a positive, finite number"):
        McpCatalogueEntry(id="a", name="A", description="d", url="http://x/mcp", call_timeout=bad)


@pytest.mark.parametrize("bad", [0, -2.5, math.inf, True, "5"])
async def test_bad_mount_timeouts_are_refused(bad: Any) -> None:
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    with pytest.raises(ValueError, match=r"call_timeout must be a positive, finite number"):
        await mount_mcp(glove, adapter=MemoryMcpAdapter("conv"), entries=[], call_timeout=bad)


def _toml(path: Path, timeout: str) -> Path:
    path.write_text(
        "[[servers]]\nid = 'slow'\nname = 'Slow'\ndescription = 'd'\n"
        f"url = 'http://127.0.0.1:9/mcp'\ncall_timeout = {timeout}\n",
        encoding="utf-8",
    )
    return path


def test_the_catalogue_file_takes_the_timeout(tmp_path: Path) -> None:
    [entry] = load_catalogue(_toml(tmp_path / "ok.toml", "2.5"))
    assert entry.call_timeout == 2.5
    with pytest.raises(
        CatalogueFileError, match=r"server #1 \(.slow.\): call_timeout: .*positive, finite"
    ):
        load_catalogue(_toml(tmp_path / "bad.toml", "-1"))
