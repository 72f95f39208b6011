"""``glove-mcp completion``: scripts the shells accept, naming every command and flag."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from glove_mcp.cli import main
from glove_mcp.cli.completion import script
from glove_mcp.cli.main import build_parser


def printed(capsys: pytest.CaptureFixture[str], shell: str) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def test_bash_parses_the_bash_script(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = printed(capsys, "bash")
    file = tmp_path / "glove-mcp.bash"
    file.write_text(text)
    checked = subprocess.run(["bash", "-n", str(file)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    assert "complete -o default -F _glove_mcp glove-mcp" in text
    for word in ("status", "servers", "doctor", "set-url", "--forget-tokens", "--check", "-V"):
        assert word in text


def test_bash_completes_commands_actions_and_flags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    file = tmp_path / "glove-mcp.bash"
    file.write_text(printed(capsys, "bash"))

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in ("glove-mcp", *words))
        program = (
            f"source {file}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; _glove_mcp; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("sta") == ["status"]
    assert complete("servers", "se") == ["set-url"]
    assert complete("servers", "remove", "x", "--for") == ["--forget-tokens"]
    assert complete("status", "--ch") == ["--check"]
    assert "--catalogue" in complete("--debug", "chat", "--c")


def test_zsh_and_fish_scripts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    zsh = printed(capsys, "zsh")
    assert zsh.startswith("#compdef glove-mcp\n") and "bashcompinit" in zsh
    fish = printed(capsys, "fish")
    assert "complete -c glove-mcp -n '__fish_use_subcommand' -a status" in fish
    assert "-l forget-tokens" in fish and "-s V -l version" in fish
    for shell, text in (("zsh", zsh), ("fish", fish)):
        if shutil.which(shell) is None:
            continue  # checked where the shell is installed
        file = tmp_path / f"glove-mcp.{shell}"
        file.write_text(text)
        done = subprocess.run([shell, "-n", str(file)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr


def test_fish_quotes_what_it_describes() -> None:
    text = script("fish", build_parser())
    # The help texts hold quotes ("the server's tokens"): each stays one fish word.
    assert "server\\'s" in text and "server's" not in text.replace("server\\'s", "")


def test_an_unknown_shell_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["completion", "tcsh"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument shell: invalid choice: 'tcsh'" in err
    main_status = None
    with pytest.raises(SystemExit) as exited:
        main_status = main(["completion", "bsh"])
    assert main_status is None and exited.value.code == 2
    assert "did you mean 'bash'?" in capsys.readouterr().err
