"""The end-to-end harness of the discovery subagent's choice (``bench/subagent_choice.py``):
its machinery with a scripted subagent (a real mount, a real local MCP server), and a short
run on a real model when ``ANTHROPIC_API_KEY`` is set (skipped otherwise)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from glove_core import ScriptedModel, ToolCall
from glove_mcp.testing import serve

_SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "subagent_choice.py"
# Loaded from its file, not through sys.path: bench's other scripts (auth.py, store.py, ...)
# must not shadow anything for the rest of the session.
_SPEC = importlib.util.spec_from_file_location("bench_subagent_choice", _SCRIPT)
assert _SPEC is not None and _SPEC.loader is not None
subagent_choice: Any = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = subagent_choice  # its dataclasses look their module up
_SPEC.loader.exec_module(subagent_choice)


async def test_the_harness_reports_what_the_subagent_activated() -> None:
    async with serve("notes") as url:
        entries, tools = subagent_choice.load_catalogue(subagent_choice.REALISTIC, url)
        assert len(entries) == 282 and "github" in tools
        subagent = ScriptedModel(
            [[ToolCall(id="a", name="activate", input={"id": "github"})], "github it is"]
        )
        activated = await subagent_choice.choose("open a pull request", entries, tools, subagent)
        # The subagent's prompt held the catalogue with the tools known ahead.
        assert "- github — GitHub: " in (subagent.requests[0].system or "")
        assert "(tools: " in (subagent.requests[0].system or "")
        idle = ScriptedModel(["nothing fits"])
        nothing = await subagent_choice.choose("bake a cake", entries, tools, idle)
    assert activated == ["github"] and nothing == []
    choice = subagent_choice.Choice()
    choice.add("task", activated, frozenset({"github", "gitlab"}))
    choice.add("task", ["gitlab"], frozenset({"github"}))
    choice.add("vendor", nothing, frozenset({"github"}))
    assert choice.share() == pytest.approx(1 / 3)
    assert choice.lines()[1].split() == ["all", "3", "0.333", "0.333", "0.333"]


def test_without_a_key_the_harness_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert subagent_choice.main([]) == 0
    assert capsys.readouterr().out.startswith("skipped: ANTHROPIC_API_KEY is not set")


@pytest.mark.skipif(
    not os.environ.get("ANTHROPIC_API_KEY"), reason="needs ANTHROPIC_API_KEY (a real model)"
)
def test_a_real_model_activates_servers(capsys: pytest.CaptureFixture[str]) -> None:
    assert subagent_choice.main(["--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "share of needs where the activated server is right:" in out
