"""``glove-mcp doctor``: where things live and what is installed, exit status 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from glove_mcp.cli import main


def test_doctor_names_the_places_and_the_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert f"configuration          {tmp_path / 'config' / 'glove'}" in out
    assert f"tokens (file store)    {tmp_path / 'data' / 'oauth.json'}  (not created yet)" in out
    assert f"chat database          {tmp_path / 'data' / 'chat.db'}" in out
    for part in ("node", "chromium", "postgresql", "extra: postgres", "extra: semantic"):
        assert f"\n  {part} " in out
    assert "extra: otel" in out
    node = shutil.which("node")
    line = next(line for line in out.splitlines() if line.startswith("  node "))
    assert (node in line) if node else ("missing" in line)
    assert not (tmp_path / "data").exists()  # it only looks


def test_doctor_json_and_an_old_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "servers.toml").write_text("[[servers]]\n")
    assert main(["doctor", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["places"]["old catalogue"] == {
        "path": str(tmp_path / "servers.toml"),
        "exists": True,
    }
    assert found["places"]["catalogue"] == {"path": None, "exists": False}
    assert (tmp_path / "servers.toml").exists()  # doctor moves nothing
    assert set(found["parts"]) >= {"node", "chromium", "postgresql", "extra: otel"}
