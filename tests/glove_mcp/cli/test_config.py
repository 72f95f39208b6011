"""Where the command keeps things: the catalogue in the configuration folder
(``$XDG_CONFIG_HOME/glove``), and the one-time move of one an earlier version left in the
data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from glove_mcp.cli import main
from glove_mcp.cli.config import catalogue_file_name, config_dir_name, data_dir_name

OLD = (
    "# my servers\n"
    '[[servers]]\nid = "docs"\nname = "Docs"\ndescription = "d"\nurl = "https://d/mcp"\n'
)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    data, config = tmp_path / "data", tmp_path / "config"
    monkeypatch.setenv("GLOVE_HOME", str(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return data, config / "glove"


def test_the_configuration_folder_follows_xdg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir_name() == str(tmp_path / "xdg" / "glove")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_dir_name() == str(tmp_path / ".config" / "glove")
    monkeypatch.setenv("XDG_CONFIG_HOME", "")  # empty counts as unset, as the spec says
    assert config_dir_name() == str(tmp_path / ".config" / "glove")


def test_servers_add_writes_the_configuration_folder(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, config = homes
    assert main(["servers", "add", "docs", "https://docs.example.com/mcp"]) == 0
    assert (config / "servers.toml").exists() and not (data / "servers.toml").exists()
    assert str(config / "servers.toml") in capsys.readouterr().out


def test_an_old_catalogue_is_moved_once_and_said_so_once(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, config = homes
    data.mkdir()
    (data / "servers.toml").write_text(OLD)
    assert main(["status"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("docs ")  # read from its new place
    assert f"moved the catalogue {data / 'servers.toml'} to {config / 'servers.toml'}" in err
    assert (config / "servers.toml").read_text() == OLD  # comments and all
    assert not (data / "servers.toml").exists()
    for folder in (config, config.parent):  # made private, as the token folder is
        assert folder.stat().st_mode & 0o777 == 0o700
    assert main(["servers", "list"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("docs ") and err == ""  # said once


def test_an_old_catalogue_beside_a_new_one_is_kept_and_named(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, config = homes
    data.mkdir()
    config.mkdir(parents=True)
    (data / "servers.toml").write_text(OLD)
    new = OLD.replace("docs", "wiki")
    (config / "servers.toml").write_text(new)
    assert main(["servers", "list"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("wiki ")
    assert f"{data / 'servers.toml'} is not read" in err
    assert (data / "servers.toml").read_text() == OLD  # nothing lost
    assert (config / "servers.toml").read_text() == new


def test_a_move_that_cannot_happen_is_a_clear_error(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, config = homes
    data.mkdir()
    (data / "servers.toml").write_text(OLD)
    config.parent.mkdir()
    config.write_text("a file where the folder should be")
    assert main(["servers", "list"]) == 2
    err = capsys.readouterr().err
    assert "cannot move the catalogue" in err and "--catalogue FILE" in err
    assert (data / "servers.toml").read_text() == OLD


def test_the_data_folder_keeps_glove_home(homes: tuple[Path, Path]) -> None:
    data, config = homes
    assert data_dir_name() == str(data)
    assert catalogue_file_name() == str(config / "servers.toml")
