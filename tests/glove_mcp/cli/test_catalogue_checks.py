"""Issue 21, item 8: the catalogue is checked when it is read. A url that is not http(s), a
repeated id (named), a field that is wrong: one line naming the server and the field, with
none of pydantic's wording ("Value error,"); a stdio command that is not installed is named
as such, not as a server "at  " that is unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from glove_mcp.connect import connect_mcp
from glove_mcp.errors import McpServerUnavailableError
from tests.glove_mcp.cli._commands import in_process, run_cli

SERVER = 'name = "X"\ndescription = "d"\n'
CASES = {
    "not a url": (
        f'[[servers]]\nid = "x"\n{SERVER}url = "not a url"\n',
        "server #1 ('x'): url: 'not a url' is not an http:// or https:// URL",
    ),
    "ftp": (
        f'[[servers]]\nid = "x"\n{SERVER}url = "ftp://files.example.com/mcp"\n',
        "url: 'ftp://files.example.com/mcp' is not an http:// or https:// URL",
    ),
    "duplicate": (
        f'[[servers]]\nid = "x"\n{SERVER}url = "https://a/mcp"\n'
        f'[[servers]]\nid = "y"\n{SERVER}url = "https://b/mcp"\n'
        f'[[servers]]\nid = "x"\n{SERVER}url = "https://c/mcp"\n',
        "server #3: id 'x' is already used by server #1; ids must be unique",
    ),
    "both": (
        f'[[servers]]\nid = "x"\n{SERVER}url = "https://a/mcp"\ncommand = ["srv"]\n',
        "catalogue entry 'x' needs exactly one of url",
    ),
    "typo": (
        f'[[servers]]\nid = "x"\n{SERVER}urll = "https://a/mcp"\n',
        "server #1 ('x'): unknown field 'urll'",
    ),
    "missing": ('[[servers]]\nid = "x"\nurl = "https://a/mcp"\n', "name is missing"),
    "bad id": (f'[[servers]]\nid = "a__b"\n{SERVER}url = "https://a/mcp"\n', "id: catalogue id"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_catalogue_is_refused_when_read(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text, expected = CASES[case]
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text(text, encoding="utf-8")
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    ran = in_process("servers", "list", "--catalogue", str(catalogue), capsys=capsys)
    assert ran.status == 2, ran.out
    [line] = ran.error_lines
    assert expected in line, line
    assert "Value error" not in ran.err and "Traceback" not in ran.err


def test_the_command_refuses_a_bad_catalogue(tmp_path: Path) -> None:
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text(CASES["duplicate"][0], encoding="utf-8")
    for command in (("servers", "list"), ("status",)):
        ran = run_cli(*command, "--catalogue", str(catalogue), home=tmp_path)
        assert ran.status == 2
        [line] = ran.error_lines
        assert "id 'x' is already used by server #1" in line


def test_a_missing_stdio_command_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = tmp_path / "servers.toml"
    catalogue.write_text(f'[[servers]]\nid = "ghost"\n{SERVER}command = ["no-such-mcp-xyz"]\n')
    ran = in_process("auth", "ghost", "--catalogue", str(catalogue), home=tmp_path, capsys=capsys)
    assert ran.status == 0
    assert "command 'no-such-mcp-xyz' was not found" in ran.out
    assert " at  " not in ran.out + ran.err


async def test_connecting_to_a_missing_stdio_command_names_it() -> None:
    with pytest.raises(McpServerUnavailableError) as raised:
        await connect_mcp("ghost", "", command=["no-such-mcp-xyz", "--serve"])
    message = str(raised.value)
    assert "could not be started: the command 'no-such-mcp-xyz' was not found" in message
    assert " at  " not in message and raised.value.program == "no-such-mcp-xyz"
