"""The command's log lines: in its words (``glove-mcp auth ID``, never ``run_mcp_oauth`` or
``WARNING glove_mcp.auth``), each said once per conversation, and never over the spinner."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
from pathlib import Path

import pytest

from glove_mcp.adapter import SqliteMcpAdapter
from glove_mcp.cli.log import TerminalLogHandler
from glove_mcp.cli.progress import Progress
from glove_mcp.oauth import FsOAuthStore
from glove_mcp.oauth.state import OAuthClientInfo, OAuthState, StoredTokens
from tests.glove_mcp.cli._commands import Servers, in_process, write_catalogue


def chat(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    url: str,
    replies: list[object],
    stdin: str,
    *,
    new: bool,
) -> tuple[int, str, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=url)
    ran = in_process(
        "chat",
        "--session",
        "s",
        *(["--new"] if new else []),
        "--script",
        str(script),
        "--catalogue",
        str(catalogue),
        "--db",
        str(tmp_path / "chat.db"),
        "--server-mode",
        home=tmp_path,
        stdin=stdin,
        capsys=capsys,
    )
    return ran.status, ran.out, ran.err


def test_a_stale_login_is_one_warning_naming_the_login_command(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    # Tokens that expired, whose refresh cannot reach the authorization server.
    store = FsOAuthStore(tmp_path / "oauth.json")
    state = OAuthState(
        server_url=servers.oauth,
        client=OAuthClientInfo(client_id="c1"),
        tokens=StoredTokens(access_token="stale", refresh_token="r1", expires_at=time.time() - 60),
        token_endpoint="http://127.0.0.1:9/token",
    )
    asyncio.run(store.set("tracker", state))
    adapter = SqliteMcpAdapter(tmp_path / "chat.db", "s")
    asyncio.run(adapter.activate("tracker"))
    asyncio.run(adapter.aclose())
    status, out, err = chat(
        tmp_path, capsys, servers.oauth, ["One.", "Two."], "first\nsecond\n", new=True
    )
    assert status == 0, err
    assert "WARNING" not in err and "adapter_auth" not in err
    assert "run_mcp_oauth" not in out + err and "get_access_token" not in out + err
    credentials = [line for line in err.splitlines() if "could not get its credentials" in line]
    assert len(credentials) == 1, err  # asked again after the 401, said once
    assert credentials[0].startswith("warning: MCP server 'tracker' could not get its credentials")
    assert "log in again: glove-mcp auth tracker --catalogue" in credentials[0]
    assert "Log in again (glove-mcp auth tracker --catalogue" in err  # the reload's failure


def test_history_of_unloaded_servers_is_said_once_per_conversation(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    found: list[object] = [
        {"tool_calls": [{"name": "find_capability", "input": {"need": "bug tracker"}}]},
        {"tool_calls": [{"name": "activate", "input": {"id": "tracker"}}]},
        "Activated.",
        "Done.",
    ]
    status, _, err = chat(tmp_path, capsys, servers.open, found, "find the tracker\n", new=True)
    assert status == 0, err
    # The tracker is gone now: its tools in the history are offered by nothing.
    status, out, err = chat(
        tmp_path,
        capsys,
        "http://127.0.0.1:9/mcp",
        ["A.", "B.", "C."],
        "one\ntwo\nthree\n",
        new=False,
    )
    assert status == 0, err
    assert "glove_core._deferral" not in err and "WARNING" not in err
    assert err.count("the conversation's history uses tools of servers that are not loaded") == 1
    assert "C." in out


class _Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def test_a_log_line_erases_the_spinner_first_and_it_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TERM", raising=False)
    screen = _Terminal()
    progress = Progress(screen)
    handler = TerminalLogHandler(None, screen)
    logger = logging.getLogger("glove_mcp.test_cli_log")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        progress.show("thinking…")
        logger.warning("the server went %s", "away")
        logger.warning("the server went %s", "away")  # said once
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
        progress.close()
    text = screen.getvalue()
    assert text.count("warning: the server went away\n") == 1
    before, after = text.split("warning: the server went away\n")
    assert before.endswith("\r\x1b[K")  # the spinner's line erased first
    assert "thinking…" in after  # and drawn again below the line
