"""Issue 21, item 7: ``glove-mcp serve`` checks its arguments, the catalogue and the script
when it starts: a mistake is one line and exit status 2, before anything listens, instead of
a 500 for every session later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import in_process, run_cli

SCRIPTS = {
    "not-json.json": ("not json at all", "is not JSON"),
    "object.json": (json.dumps({"replies": "hi"}), "expected a JSON list of replies"),
    "number.json": (json.dumps(["ok", 42]), "reply #2: expected a string, or"),
    "no-name.json": (
        json.dumps([{"tool_calls": [{"input": {}}]}]),
        "reply #1: tool call #1 needs a name",
    ),
    "typo.json": (json.dumps([{"txt": "hello"}]), "reply #1: unknown field 'txt'"),
    "bad-input.json": (
        json.dumps([{"tool_calls": [{"name": "x", "input": "y"}]}]),
        "input must be a JSON object",
    ),
    "latency.json": (json.dumps({"latency": "slow", "replies": ["hi"]}), "latency must be"),
}
KEY = {"GLOVE_API_KEY": "test-key-for-serve-0123456789"}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_each_kind_of_bad_script_is_named(tmp_path: Path, name: str) -> None:
    from glove_mcp.cli.errors import CliError
    from glove_mcp.cli.script import read_script

    text, expected = SCRIPTS[name]
    script = tmp_path / name
    script.write_text(text, encoding="utf-8")
    with pytest.raises(CliError) as raised:
        read_script(str(script))
    assert raised.value.status == 2
    assert expected in str(raised.value) and name in str(raised.value)


@pytest.mark.parametrize("name", ["not-json.json", "no-name.json"])
def test_a_bad_script_stops_serve_at_start(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = SCRIPTS[name]
    script = tmp_path / name
    script.write_text(text, encoding="utf-8")
    ran = in_process(
        "serve", "--port", "0", "--script", str(script), home=tmp_path, env=KEY, capsys=capsys
    )
    assert ran.status == 2, ran.out + ran.err
    [line] = ran.error_lines
    assert expected in line and name in line
    assert "Traceback" not in ran.err and "http://" not in ran.out  # never listened


def test_a_good_script_still_serves(tmp_path: Path) -> None:
    from glove_core import ScriptedModel
    from glove_mcp.cli.script import load_script

    script = tmp_path / "ok.json"
    script.write_text(json.dumps({"latency": 0, "replies": ["hi", {"text": "t"}]}))
    model = load_script(str(script))
    assert isinstance(model, ScriptedModel) and model.remaining == 2


def test_a_missing_script_a_bad_catalogue_and_a_bad_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope.json")
    ran = in_process("serve", "--script", missing, home=tmp_path, env=KEY, capsys=capsys)
    assert ran.status == 2 and "no such file" in ran.error_lines[0]

    catalogue = tmp_path / "servers.toml"
    catalogue.write_text('[[servers]]\nid = "x"\nname = "X"\ndescription = "d"\nurl = "ftp://h/"\n')
    ran = in_process("serve", "--catalogue", str(catalogue), home=tmp_path, env=KEY, capsys=capsys)
    assert ran.status == 2
    [line] = ran.error_lines
    assert "server #1 ('x'): url: 'ftp://h/' is not an http:// or https:// URL" in line
    assert "http://127" not in ran.out

    ran = run_cli("serve", "--port", "70000", home=tmp_path)  # the real entry point's parser
    assert ran.status == 2 and "a port is 0 to 65535, got 70000" in ran.err
