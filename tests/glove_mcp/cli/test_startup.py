"""Issue 21, item 1: the command answers at once. ``--help``, ``--version`` and ``status``
load none of the heavy libraries (the MCP SDK, pydantic, anthropic, httpx2, glove_core,
asyncio), and the commands that must load them show "starting…" on a terminal meanwhile.

(How fast is measured, not asserted: ``python bench/startup.py``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import cli, cli_env, run_on_terminal

HEAVY = ("mcp", "mcp_types", "pydantic", "anthropic", "httpx2", "glove_core", "asyncio", "typing")


def _imported(args: list[str], home: Path) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "glove_mcp.cli", *args],
        env=cli_env(home),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.stdout.decode(), names


@pytest.mark.parametrize("args", [["--help"], ["status"], ["chat", "--help"]])
def test_help_and_status_load_no_heavy_library(tmp_path: Path, args: list[str]) -> None:
    out, names = _imported(args, tmp_path)
    assert out.startswith("usage: glove-mcp") or "not logged in" in out
    loaded = sorted(name for name in names if name.split(".")[0] in HEAVY)
    assert not loaded, f"glove-mcp {' '.join(args)} imported {loaded}"


def test_status_with_a_token_file_and_a_catalogue_stays_light(tmp_path: Path) -> None:
    (tmp_path / "servers.toml").write_text(
        '[[servers]]\nid = "a"\nname = "A"\ndescription = "d"\nurl = "https://a/mcp"\n'
    )
    (tmp_path / "oauth.json").write_text(
        json.dumps({"format": "glove-mcp-oauth", "version": 1, "entries": {}})
    )
    out, names = _imported(["status"], tmp_path)  # the data dir's servers.toml is read
    assert out.startswith("a ")
    heavy = set(HEAVY) - {"typing"}  # the standard library's TOML reader imports typing
    assert not sorted(name for name in names if name.split(".")[0] in heavy)


def test_a_slow_start_shows_starting_on_a_terminal(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hi"]))
    # A conversation that is resumed or named loads everything before its prompt (a new
    # one shows its prompt at once and loads behind it: ``chat_fast``).
    status, screen = run_on_terminal(
        cli("chat", "--session", "named", "--new", "--script", str(script)),
        cli_env(tmp_path),
        stdin=b"",
    )
    assert status == 0, screen
    assert "starting…" in screen and screen.index("starting…") < screen.index("session ")
