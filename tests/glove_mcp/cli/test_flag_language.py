"""Issue 21, item 5: what reaches the terminal speaks in the command's flags, not the
library's keyword arguments, and a command it suggests keeps the ``--catalogue FILE`` and
``--store`` the person passed, quoted so that it runs as printed."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest

from glove_core.testing import FakeError, serve_fake_anthropic
from glove_mcp.errors import (
    McpAuthExpiredError,
    McpInsufficientScopeError,
    OAuthCallbackTimeoutError,
    OAuthKeyringUnavailableError,
    OAuthLoginRequiredError,
)
from glove_mcp.oauth.token_source import default_login_command
from tests.glove_mcp.cli._commands import Servers, cli_env, in_process, run_cli, write_catalogue

LIBRARY_WORDS = ("run_mcp_oauth", "open_browser", "FsOAuthStore", "SqliteStore", "api_key=")


def _speaks_flags(text: str) -> None:
    for word in LIBRARY_WORDS:
        assert word not in text, f"{word!r} reached the terminal: {text}"


def test_library_advice_becomes_flags_and_hints_keep_the_options() -> None:
    import argparse

    from glove_mcp.cli.errors import terminal_message

    args = argparse.Namespace(catalogue="my servers.toml", store="keyring")
    hint = "glove-mcp auth tracker --catalogue 'my servers.toml' --store keyring"
    cases = [
        McpAuthExpiredError("tracker", "http://h/mcp"),
        McpInsufficientScopeError("tracker", "http://h/mcp", "write"),
        OAuthLoginRequiredError(
            "tracker", default_login_command("tracker", "http://h/mcp"), "no tokens"
        ),
    ]
    for error in cases:
        message, status = terminal_message(error, args)
        assert status == 1 and hint in message, message
        _speaks_flags(message)
    message, _ = terminal_message(OAuthCallbackTimeoutError("http://127.0.0.1:1/cb", 5), args)
    assert "--no-browser" in message
    message, _ = terminal_message(OAuthKeyringUnavailableError("glove-mcp", "NoKeyringError"), args)
    assert "--store file" in message
    _speaks_flags(message)
    assert shlex.split(hint)[4] == "my servers.toml"  # the hint runs as printed


def test_a_timed_out_login_suggests_the_command_as_typed(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "my servers"
    folder.mkdir()
    catalogue = write_catalogue(folder / "servers.toml", tracker=servers.oauth)
    ran = in_process(
        "auth",
        "tracker",
        "--no-browser",
        "--port",
        "0",
        "--timeout",
        "0.5",
        "--catalogue",
        str(catalogue),
        home=tmp_path,
        capsys=capsys,
    )
    assert ran.status == 1
    [line] = ran.error_lines
    assert f"run `glove-mcp auth tracker --catalogue {shlex.quote(str(catalogue))}` again" in line
    assert "--no-browser" in line
    _speaks_flags(line)


def test_no_keyring_says_use_the_file_store(tmp_path: Path) -> None:
    env = cli_env(tmp_path, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    ran = run_cli("status", "--store", "keyring", home=tmp_path, env=env)
    assert ran.status == 1
    [line] = ran.error_lines
    assert "use --store file instead" in line
    _speaks_flags(ran.err)


def test_a_damaged_database_names_the_db_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "chat.db"
    db.write_bytes(b"this is not a SQLite database" * 100)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hi"]))
    ran = in_process("chat", "--script", str(script), "--db", str(db), home=tmp_path, capsys=capsys)
    assert ran.status == 1
    [line] = ran.error_lines
    assert "Pass --db FILE" in line
    _speaks_flags(ran.err)


async def test_a_refused_api_key_names_the_variable(tmp_path: Path) -> None:
    async with serve_fake_anthropic() as fake:
        fake.script(FakeError(401))
        env = cli_env(tmp_path, ANTHROPIC_API_KEY="wrong-key", ANTHROPIC_BASE_URL=fake.base_url)
        ran = await asyncio.to_thread(
            run_cli,
            "chat",
            "--catalogue",
            str(write_catalogue(tmp_path / "c.toml", x="http://127.0.0.1:9/mcp")),
            home=tmp_path,
            env=env,
            stdin=b"hello\n",
        )
    assert ran.status == 0, ran.err
    [line] = [text for text in ran.out.splitlines() if "error:" in text]
    assert "ANTHROPIC_API_KEY" in line
    _speaks_flags(line)
    assert "wrong-key" not in ran.out + ran.err
