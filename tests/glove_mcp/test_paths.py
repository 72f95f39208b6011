"""The default paths (``glove_mcp.paths``): where the command and the programs look."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from glove_mcp import paths


def test_glove_home_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "/elsewhere")
    assert paths.data_dir() == str(tmp_path)
    assert paths.token_file() == os.path.join(str(tmp_path), "oauth.json")
    # Configuration is not data: the catalogue follows XDG_CONFIG_HOME, not GLOVE_HOME.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert paths.catalogue_file() == os.path.join(str(tmp_path), "config", "glove", "servers.toml")


def test_then_xdg_then_the_home_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GLOVE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    assert paths.data_dir() == os.path.join("/data", "glove")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", "/home/someone")
    assert paths.data_dir() == os.path.join("/home/someone", ".local", "share", "glove")


def test_the_command_uses_the_same_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from glove_mcp.cli.config import token_file

    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    assert str(token_file()) == paths.token_file()


def test_importing_the_paths_loads_nothing_heavy() -> None:
    code = (
        "import sys, glove_mcp.paths; "
        "print(sorted(m for m in sys.modules if m.startswith(('glove_core', 'pathlib', 'mcp'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True)
    assert done.stdout.strip() == "[]"
