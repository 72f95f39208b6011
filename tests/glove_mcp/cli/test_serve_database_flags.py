"""Issue 20: ``glove-mcp serve --database`` checks its flags and the database at start-up, and
says what is wrong in the flags' words (never with the password)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from glove_mcp.cli import main
from tests._postgres import require_postgres_driver


@pytest.fixture
def serve_args(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.setenv("GLOVE_API_KEY", "test-key-for-serve-0123456789")
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["ok"]))
    return ["serve", "--port", "0", "--script", str(script)]


def test_bad_database_flags_are_named(
    serve_args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*serve_args, "--database", "mysql://db/glove"]) == 2
    assert "--database must be a postgresql:// URL" in capsys.readouterr().err
    both = [*serve_args, "--db", "x.db", "--database", "postgresql://db/glove"]
    assert main(both) == 2
    assert "give --db (a SQLite file) or --database (PostgreSQL), not both" in (
        capsys.readouterr().err
    )
    sizes = ["--database-pool-min", "5", "--database-pool-max", "2"]
    assert main([*serve_args, "--database", "postgresql://db/glove", *sizes]) == 2
    assert "--database-pool-max (2) must be at least --database-pool-min (5)" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit):
        main([*serve_args, "--database-timeout", "0"])
    assert "argument --database-timeout: must be more than 0" in capsys.readouterr().err


def test_an_unreachable_database_stops_the_start_naming_the_flag(
    serve_args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    require_postgres_driver()
    url = "postgresql://glove:s3cret@127.0.0.1:9/glove?connect_timeout=1"
    assert main([*serve_args, "--database", url, "--database-timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert "--database postgresql://glove:***@127.0.0.1:9/glove" in err
    assert "did not answer within 1 s" in err and "s3cret" not in err


def test_a_reachable_database_is_migrated_before_listening(
    serve_args: list[str], postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The port is taken: the command stops after the database check, which migrated.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert main([*serve_args, "--database", postgres_url, "--port", port]) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute("SELECT component FROM glove_store_schema").fetchall()
    assert ("glove_core.conversations",) in rows
