"""``glove-mcp chat``'s first prompt, shown before the model and MCP SDKs are loaded: what
the person sees and can do is what the ordinary path gave (the same lines, the first line
answered, Ctrl-C and Ctrl-D at that prompt), and a check that fails behind the prompt is
still the error and exit status it always was. (How soon the prompt comes is a figure:
``bench/startup.py``.)"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import CLI, cli_env, run_cli, write_catalogue
from tests.glove_mcp.cli.test_console_asks import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def _args(tmp_path: Path, replies: object) -> list[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    return ["chat", "--script", str(script), "--catalogue", str(catalogue)]


def test_the_first_prompt_answers_its_line_and_ctrl_c_redraws_it(tmp_path: Path) -> None:
    term = Terminal([*CLI, *_args(tmp_path, ["Hi there."])], cli_env(tmp_path, NO_COLOR="1"))
    term.expect(r"session chat-\d{8}-\d{6} \(resume with: glove-mcp chat --session chat-")
    term.expect(r"active servers: none \(the agent finds servers as it needs them\)\. /help")
    term.expect(r"you> ")
    term.process.send_signal(2)  # Ctrl-C at the prompt: a fresh prompt, as at any other
    term.expect(r"\(Ctrl-D or /quit to leave\)\r?\nyou> ")
    term.type("hello")
    term.expect(r"agent: Hi there\.")
    term.expect(r"you> ")
    term.type("/quit")
    assert term.finish() == 0
    assert term.text.count("(resume with:") == 1 and term.text.count("active servers") == 1


def test_end_of_input_at_the_first_prompt_leaves_and_saves_nothing(tmp_path: Path) -> None:
    ran = run_cli(*_args(tmp_path, ["unused"]), "--db", str(tmp_path / "c.db"), home=tmp_path)
    assert ran.status == 0, ran.err
    assert re.fullmatch(r"session \S+ \(resume with: .*\)\nactive servers: .*\nyou> \n", ran.out)
    assert not (tmp_path / "c.db").exists()


def test_a_bad_script_is_still_an_error_after_the_prompt(tmp_path: Path) -> None:
    args = _args(tmp_path, [])
    (tmp_path / "script.json").write_text("not json", encoding="utf-8")
    for stdin in (b"", b"hello\n"):
        ran = run_cli(*args, home=tmp_path, stdin=stdin)
        assert ran.status == 2, ran
        assert ran.error_lines == [
            f"glove-mcp: script {str(tmp_path / 'script.json')!r} is not JSON: Expecting value "
            "(line 1, column 1)"
        ]
        assert "Traceback" not in ran.err


def test_no_model_is_still_an_error(tmp_path: Path) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    ran = run_cli("chat", "--catalogue", str(catalogue), home=tmp_path, stdin=b"hello\n")
    assert ran.status == 2
    assert ran.error_lines == [
        "glove-mcp: no model: set ANTHROPIC_API_KEY (or pass --script FILE for an offline "
        "scripted model)"
    ]
