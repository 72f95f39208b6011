"""Issue 21, item 6: slow steps show that something is happening. On a terminal the command
shows an indicator while the model thinks, and says so while the model API is retried; piped
output and ``--json`` get none of it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from glove_core.testing import FakeError, FakeReply, serve_fake_anthropic
from tests.glove_mcp.cli._commands import (
    Servers,
    cli,
    cli_env,
    run_cli,
    run_on_terminal,
    write_catalogue,
)


async def test_thinking_and_retries_show_on_a_terminal_only(tmp_path: Path) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", x="http://127.0.0.1:9/mcp")
    args = cli("chat", "--catalogue", str(catalogue), "--db", str(tmp_path / "chat.db"))
    async with serve_fake_anthropic() as fake:
        env = cli_env(tmp_path, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=fake.base_url)
        # Overloaded twice, then an answer: the default policy retries after ~0.5 s and ~1 s.
        fake.script(FakeError(529), FakeError(529), FakeReply(("Hello there.",)))
        status, screen = await asyncio.to_thread(run_on_terminal, args, env, stdin=b"hi\n")
        assert status == 0, screen
        assert "thinking…" in screen
        assert screen.count("the model API did not answer; retrying in") >= 2
        assert "Hello there." in screen

        fake.script(FakeError(529), FakeReply(("Hello again.",)))
        ran = await asyncio.to_thread(run_cli, *args[3:], home=tmp_path, env=env, stdin=b"hi\n")
    assert ran.status == 0, ran.err
    assert "Hello again." in ran.out
    assert "thinking…" not in ran.out + ran.err and "retrying in" not in ran.out + ran.err
    assert "\r" not in ran.out + ran.err and "\x1b" not in ran.out + ran.err


def test_checking_servers_shows_progress_but_not_in_json(tmp_path: Path, servers: Servers) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    env = cli_env(tmp_path)
    status, screen = run_on_terminal(cli("status", "--check", "--catalogue", str(catalogue)), env)
    assert status == 1, screen  # the tracker needs a login: attention (issue 32.6)
    assert "asking the servers…" in screen
    assert "not logged in" in screen

    status, screen = run_on_terminal(
        cli("status", "--check", "--json", "--catalogue", str(catalogue)), env
    )
    assert status == 1, screen
    assert "asking" not in screen and "\x1b" not in screen
    assert json.loads(screen.replace("\r\n", "\n"))[0]["state"] == "needs_login"


def test_a_login_shows_what_it_waits_for(tmp_path: Path, servers: Servers) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    status, screen = run_on_terminal(
        cli(
            "auth",
            "tracker",
            "--no-browser",
            "--port",
            "0",
            "--timeout",
            "0.5",
            "--catalogue",
            str(catalogue),
        ),
        cli_env(tmp_path),
    )
    assert status == 1
    assert f"checking {servers.oauth}…" in screen
    assert "waiting for the authorization" in screen
