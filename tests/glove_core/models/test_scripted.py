"""ScriptedModel built from JSON scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glove_core import Glove, ScriptedModel, tool


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


async def test_from_json_file_plays_text_and_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "latency": 0,
                "replies": [{"text": "calling", "tool_calls": [{"name": "ping"}]}, "done"],
            }
        )
    )
    model = ScriptedModel.from_json(path)
    glove = Glove(model=model, system_prompt="s").fold(ping).build()
    result = await glove.process_request("go")
    assert result.text == "done"
    assert result.messages[1].text == "calling"
    assert result.messages[1].tool_calls is not None
    assert result.messages[1].tool_calls[0].name == "ping"


def test_from_json_rejects_bad_scripts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read script"):
        ScriptedModel.from_json(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="JSON list of replies"):
        ScriptedModel.from_json({"replies": "nope"})
    with pytest.raises(ValueError, match="reply #2 must be a string"):
        ScriptedModel.from_json(["ok", {"tool_calls": [{"input": {}}]}])
    assert ScriptedModel.from_json(["a", "b"]).remaining == 2
