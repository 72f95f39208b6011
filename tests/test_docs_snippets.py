"""What the README, the guides in ``docs/`` and the examples say works.
The quick start makes and activates a virtual environment; the offline script format is
documented and the documented script runs; the local test servers are described; the
tool-calling snippet (with ``ToolCall(id=…)``) runs; the examples read the command's variables
and honour ``GLOVE_HOME``, and without a key they print one line instead of a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import Servers, cli_env, in_process, write_catalogue

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The guides the README's sections moved to (the documentation site's pages).
MCP_GUIDE = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
AGENT_GUIDE = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "examples"


def _section(title: str, text: str = README) -> str:
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    return text[start:end]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_the_quick_start_makes_and_activates_a_virtual_environment() -> None:
    [block] = _blocks(_section("## Quick start"), "bash")
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install")
    assert "glove-mcp demo" in commands[0]
    assert commands[1].startswith(". .venv/bin/activate && python -m pytest")


def test_the_documented_script_runs(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    [example] = _blocks(_section("### Offline scripts", MCP_GUIDE), "json")
    script = tmp_path / "replies.json"
    script.write_text(example, encoding="utf-8")
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.open)
    ran = in_process(
        "chat",
        "--server-mode",
        "--script",
        str(script),
        "--catalogue",
        str(catalogue),
        home=tmp_path,
        stdin="what is open?\n",
        capsys=capsys,
    )
    assert ran.status == 0, ran.err
    assert "← tracker__list_issues" in ran.out and "One open issue: ENG-1." in ran.out

    ran = in_process(
        "chat", "--script", str(script), home=tmp_path, stdin="one\ntwo\n", capsys=capsys
    )
    assert "the --script file has no reply left" in ran.out  # the second request ran out


def test_the_local_test_servers_are_described() -> None:
    section = _section("### Local test servers", MCP_GUIDE)
    assert "python -m glove_mcp.testing tracker" in section
    done = subprocess.run(
        [sys.executable, "-m", "glove_mcp.testing", "--help"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    for flag in re.findall(r"(--[a-z-]+)", section):
        assert flag in done.stdout.decode(), flag


async def test_the_tool_calling_snippet_runs() -> None:
    marker = "<!-- tested by tests/test_docs_snippets.py -->\n```python\n"
    snippet = AGENT_GUIDE[AGENT_GUIDE.index(marker) + len(marker) :].split("```", 1)[0]
    assert "ToolCall(id=" in snippet
    from glove_core import Glove, tool

    @tool
    def weather(city: str) -> str:
        """Today's weather in a city.

        Args:
            city: the city name.
        """
        return f"Sunny and 21 °C in {city}."

    namespace: dict[str, object] = {"Glove": Glove, "weather": weather}
    exec(  # the README's own words, run as written
        "async def snippet():\n" + textwrap.indent(snippet, "    "), namespace
    )
    await namespace["snippet"]()  # type: ignore[operator]


def test_examples_read_the_commands_variables() -> None:
    for path in EXAMPLES.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(?<!GLOVE_)(NOTION|LINEAR)_MCP_URL", text), path.name
        assert "GLOVE_OAUTH_FILE" not in text, path.name
        if path.name != "_settings.py":
            assert "~/.local/share/glove" not in text, path.name
    assert "GLOVE_HOME" in (EXAMPLES / "_settings.py").read_text()


@pytest.mark.parametrize("name", ["notion_agent.py", "multi_mcp_cli.py"])
def test_an_example_without_a_key_says_so_in_one_line(tmp_path: Path, name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=60,
        check=False,
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert err.splitlines() == [
        f"{name[:-3]}: no model: set ANTHROPIC_API_KEY, or GLOVE_SCRIPT=FILE to play a JSON "
        "script offline"
    ]
