"""Issue 21, item 10: ``--version``; ``--json`` for ``status`` and ``servers list``;
``NO_COLOR``; ``servers list|add|remove`` (comments kept, writes atomic, a broken file refused
untouched); subcommand help with a description, examples and defaults."""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import (
    cli,
    cli_env,
    in_process,
    run_cli,
    run_on_terminal,
    write_catalogue,
)

COMMANDS = ("demo", "auth", "status", "logout", "servers", "chat", "serve")


def test_version(tmp_path: Path) -> None:
    ran = run_cli("--version", home=tmp_path)
    assert ran.status == 0 and ran.out == f"glove-mcp {version('glove-agents')}\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_a_description_examples_and_defaults(tmp_path: Path, command: str) -> None:
    ran = run_cli(command, "--help", home=tmp_path)
    assert ran.status == 0
    usage, description = ran.out.split("\n\n")[:2]
    assert usage.startswith(f"usage: glove-mcp {command}")
    assert len(description) > 40 and not description.startswith(("options", "positional"))
    examples = ran.out.split("examples:\n", 1)[1]
    assert f"glove-mcp {command}" in examples
    if command in ("auth", "serve"):
        assert "(default: " in ran.out
    ran = run_cli("--help", home=tmp_path)
    assert command in ran.out and "examples:" in ran.out


def test_servers_list_add_remove_keep_comments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    original = catalogue.read_text()
    catalogue.chmod(0o640)
    common = ("--catalogue", str(catalogue))

    ran = run_cli(
        "servers",
        "add",
        "docs",
        "https://docs.example.com/mcp",
        "--description",
        "Our docs",
        "--tag",
        "docs",
        *common,
        home=tmp_path,
    )
    assert ran.status == 0, ran.err
    ran = in_process(
        "servers",
        "add",
        "files",
        *common,
        "--",
        sys.executable,
        "-m",
        "glove_mcp.testing",
        "notes",
        "--stdio",
        capsys=capsys,
    )
    assert ran.status == 0, ran.err
    text = catalogue.read_text()
    assert text.startswith(original)  # comments and layout untouched, entries appended
    assert oct(catalogue.stat().st_mode & 0o777) == "0o640"

    ran = run_cli("servers", "list", "--json", *common, home=tmp_path)
    rows = json.loads(ran.out)
    assert [row["id"] for row in rows] == ["tracker", "docs", "files"]
    assert rows[1]["tags"] == ["docs"] and rows[2]["command"][-1] == "--stdio"
    ran = in_process("servers", "list", *common, capsys=capsys)
    assert ran.out.splitlines()[1].split()[:3] == ["docs", "http", "https://docs.example.com/mcp"]

    for bad, expected in [
        (("docs", "https://again/mcp"), "'docs' is already in"),
        (("ftp", "ftp://h/mcp"), "URL: 'ftp://h/mcp' is not an http:// or https:// URL"),
        (("nothing",), "needs a URL"),
        (("bad__id", "https://h/mcp"), "ID: catalogue id"),
    ]:
        ran = in_process("servers", "add", *bad, *common, capsys=capsys)
        assert ran.status == 2 and expected in ran.error_lines[0], ran.err

    ran = in_process("servers", "remove", "docs", *common, capsys=capsys)
    assert ran.status == 0 and "docs: removed" in ran.out
    assert "docs" not in catalogue.read_text() and catalogue.read_text().startswith(original)
    ran = in_process("servers", "remove", "docs", *common, capsys=capsys)
    assert ran.status == 2 and "no server 'docs'" in ran.err


def test_servers_add_refuses_a_broken_file_and_creates_the_default(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[[servers]\nid = ")
    ran = run_cli("servers", "add", "x", "https://h/mcp", "--catalogue", str(broken), home=tmp_path)
    assert ran.status == 2 and "not valid TOML" in ran.err
    assert broken.read_text() == "[[servers]\nid = "

    # No --catalogue: the data directory's servers.toml, made from the built-in servers,
    # which every command reads from then on.
    ran = run_cli("servers", "add", "docs", "https://docs.example.com/mcp", home=tmp_path)
    assert ran.status == 0 and "created" in ran.out
    ran = run_cli("status", home=tmp_path)
    assert [line.split()[0] for line in ran.out.splitlines()] == ["notion", "linear", "docs"]
    assert not list(tmp_path.glob(".servers.toml.*"))  # no temporary file left


def test_no_color(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "nope", "input": {}}]}, "Done."]))
    args = cli("chat", "--script", str(script), "--server-mode")
    status, screen = run_on_terminal(args, cli_env(tmp_path), stdin=b"go\n")
    assert status == 0, screen
    assert "\x1b[36m→ nope" in screen  # coloured on a terminal
    status, screen = run_on_terminal(args, cli_env(tmp_path, NO_COLOR="1"), stdin=b"go\n")
    assert status == 0, screen
    assert "→ nope" in screen and "\x1b[3" not in screen and "\x1b[1m" not in screen


def test_servers_add_keeps_inline_arrays_symlinks_and_odd_bytes_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    new = ("b", "https://b.example/mcp")
    # An inline array cannot take a [[servers]] table: refused, the file left byte for byte.
    inline = tmp_path / "inline.toml"
    inline.write_text(
        'servers = [ { id = "a", name = "A", description = "d", url = "https://a.example/mcp" } ]\n'
    )
    before = inline.read_bytes()
    ran = in_process("servers", "add", *new, "--catalogue", str(inline), capsys=capsys)
    assert ran.status == 2 and "would not give valid TOML" in ran.err
    assert inline.read_bytes() == before
    # A symbolic link keeps pointing at its target, which gets the edit.
    real = tmp_path / "real.toml"
    real.write_text('[[servers]]\nid = "a"\nname = "A"\ndescription = "d"\nurl = "https://a/mcp"\n')
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    ran = in_process("servers", "add", *new, "--catalogue", str(link), capsys=capsys)
    assert ran.status == 0 and link.is_symlink() and 'id = "b"' in real.read_text()
    # Bytes that are not UTF-8: one clear line, nothing written.
    odd = tmp_path / "odd.toml"
    odd.write_bytes(b"\xff\xfe")
    ran = in_process("servers", "add", *new, "--catalogue", str(odd), capsys=capsys)
    assert ran.status == 2 and "not UTF-8 text" in ran.err and odd.read_bytes() == b"\xff\xfe"
