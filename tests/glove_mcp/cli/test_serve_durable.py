"""``glove-mcp serve --durable``: its flag checks, in the command's words."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from glove_mcp.cli import main


@pytest.fixture
def serve_args(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.setenv("GLOVE_API_KEY", "test-key-for-serve-0123456789")
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["ok"]))
    return ["serve", "--port", "0", "--script", str(script)]


def test_durable_without_a_database_is_refused(
    serve_args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*serve_args, "--durable"]) == 2
    err = capsys.readouterr().err
    assert "--durable needs --database postgresql://" in err
    assert "Traceback" not in err


def test_durable_without_the_extra_names_it(
    serve_args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "dbos", None)  # as if the extra were not installed
    assert main([*serve_args, "--database", "postgresql://db/glove", "--durable"]) == 2
    assert "--durable needs the durable extra: pip install 'glove-agents[durable]'" in (
        capsys.readouterr().err
    )


def test_the_help_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--durable" in capsys.readouterr().out
