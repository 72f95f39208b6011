"""The command's parser as a person meets it: suggestions for a mistyped command or flag,
help when run bare, ``-V``, global flags on either side of the command, and a description
and examples on every command's help."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from glove_mcp.cli import main
from glove_mcp.cli.main import build_parser, command_module, parse
from glove_mcp.cli.parser import Parser, did_you_mean


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as exited:  # argparse's errors, --help and --version
        status = exited.code if isinstance(exited.code, int) else 2
    out, err = capsys.readouterr()
    return status, out, err


def test_a_mistyped_command_is_named_with_the_one_meant(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "stauts")
    assert status == 2
    assert "unknown command 'stauts'; did you mean 'status'?" in err
    status, _, err = run(capsys, "servers", "lsit")
    assert status == 2 and "unknown action 'lsit'; did you mean 'list'?" in err
    status, _, err = run(capsys, "xyzzy")  # nothing close: no suggestion, the commands listed
    assert status == 2 and "did you mean" not in err and "commands: demo, auth" in err


def test_a_mistyped_flag_is_named_with_the_one_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    status, _, err = run(capsys, "status", "--jsn")
    assert status == 2
    assert "unrecognized arguments: --jsn; did you mean '--json'?" in err
    assert "usage: glove-mcp status" in err  # the command's own usage, not the top level's
    status, _, err = run(capsys, "servers", "remove", "x", "--forgt-tokens")
    assert status == 2 and "did you mean '--forget-tokens'?" in err
    assert did_you_mean("--zzzzzz", ["--json"]) == ""


def test_run_bare_it_prints_the_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys)
    assert status == 2 and out == ""
    assert err.startswith("usage: glove-mcp")
    for command in ("demo", "auth", "status", "servers", "chat", "serve", "doctor", "completion"):
        assert f"\n    {command}" in err
    assert "examples:" in err and "exit status" in err


def test_dash_v_is_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "-V")
    assert status == 0 and out.startswith("glove-mcp ")
    assert run(capsys, "--version")[1] == out


def test_global_flags_go_before_or_after_the_command(tmp_path: Path) -> None:
    for argv in (
        ["--debug", "--catalogue", "a.toml", "status"],
        ["status", "--debug", "--catalogue", "a.toml"],
        ["--catalogue", "a.toml", "status", "--debug"],
        ["servers", "--debug", "list", "--catalogue", "a.toml"],
        ["--debug", "servers", "list", "--catalogue=a.toml"],
    ):
        args = parse(argv)
        assert args.debug is True and args.catalogue == "a.toml", argv
    args = parse(["status"])
    assert args.debug is False and args.catalogue is None
    # Given on both sides, the later one wins, as with any repeated flag.
    assert parse(["--catalogue", "a.toml", "status", "--catalogue", "b.toml"]).catalogue == "b.toml"


def test_a_global_catalogue_before_the_command_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    catalogue = tmp_path / "team.toml"
    catalogue.write_text(
        '[[servers]]\nid = "docs"\nname = "Docs"\ndescription = "d"\nurl = "https://d/mcp"\n'
    )
    status, out, _ = run(capsys, "--catalogue", str(catalogue), "servers", "list")
    assert status == 0 and out.startswith("docs ")
    status, out, _ = run(capsys, "--catalogue", str(catalogue), "status")
    assert status == 0 and out.startswith("docs ")


def _every_command(
    parser: Parser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], Parser]]:
    found = []
    for name, sub in parser.commands().items():
        found.append(((*path, name), sub))
        found += _every_command(sub, (*path, name))
    return found


def test_every_command_has_a_description_and_an_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands = _every_command(build_parser())
    names = {" ".join(path) for path, _ in commands}
    assert {"servers list", "servers remove", "servers set-url", "servers test"} <= names
    assert {"doctor", "completion", "status", "auth", "logout", "chat", "serve", "demo"} <= names
    for path, sub in commands:
        assert sub.description, path
        assert sub.epilog and sub.epilog.startswith("examples:\n  "), path
        status, out, _ = run(capsys, *path, "--help")
        assert status == 0 and sub.description.split()[0] in out, path
        example = out.split("examples:\n", 1)[1].splitlines()[0]
        assert f"glove-mcp {' '.join(path)}" in example, path


def test_only_the_wanted_command_is_built() -> None:
    # Start-up: a run that names its command builds (and imports) that command alone.
    import subprocess

    parser = build_parser("status")
    assert list(parser.commands()) == ["status"]
    assert "--check" in parser.commands()["status"].flags()
    assert "--script" in build_parser().commands()["chat"].flags()
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from glove_mcp.cli.main import parse; parse(['status']); "
            "print(sorted(m for m in sys.modules if m.startswith('glove_mcp.cli.')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "glove_mcp.cli.status" in imported
    assert "glove_mcp.cli.chat'" not in imported and "glove_mcp.cli.serve'" not in imported


def test_a_command_module_is_one_of_the_commands() -> None:
    assert command_module("status").NAME == "status"
    with pytest.raises(ValueError, match="no command 'parser'"):
        command_module("parser")


def test_double_dash_is_for_servers_add_only(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "status", "--", "x")
    assert status == 2 and "servers add ID -- COMMAND" in err
    args = parse(["servers", "add", "files", "--", "npx", "-y", "server", "--flag"])
    assert args.command_line == ["npx", "-y", "server", "--flag"] and args.id == "files"


def test_the_entry_point_prints_help_bare(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "glove_mcp.cli"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stderr.startswith("usage: glove-mcp")
