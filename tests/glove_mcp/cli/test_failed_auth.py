"""Issue 21, item 4: a failed ``auth`` leaves nothing in ``oauth.json`` (no file when there was
none, the same bytes when there was one), and a token-less entry that an older version left
there does not make every call log a WARNING."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from glove_mcp.oauth import FsOAuthStore, empty_oauth_state
from tests.glove_mcp.cli._commands import Servers, in_process, write_catalogue


def test_a_failed_login_leaves_the_token_file_as_it_was(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    args = ("auth", "tracker", "--no-browser", "--port", "0", "--catalogue", str(catalogue))

    ran = in_process(*args, home=tmp_path, stdin="garbage\n", capsys=capsys)
    assert ran.status == 1
    assert not (tmp_path / "oauth.json").exists()

    # Another server's login is there: a failed login keeps the file byte for byte.
    asyncio.run(FsOAuthStore(tmp_path / "oauth.json").set("other", empty_oauth_state("http://x")))
    before = (tmp_path / "oauth.json").read_bytes()
    ran = in_process(*args, "--timeout", "0.5", home=tmp_path, capsys=capsys)
    assert ran.status == 1
    assert (tmp_path / "oauth.json").read_bytes() == before


def test_a_token_less_entry_logs_no_warning_per_call(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    # What a login interrupted by an older version left: a client, no tokens.
    asyncio.run(
        FsOAuthStore(tmp_path / "oauth.json").set("tracker", empty_oauth_state(servers.oauth))
    )
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "find_capability", "input": {"need": "bug tracker"}}]},
                {"tool_calls": [{"name": "activate", "input": {"id": "tracker"}}]},
                "The tracker needs a login.",
                "Log in first.",
            ]
        )
    )
    ran = in_process(
        "chat",
        "--server-mode",
        "--catalogue",
        str(catalogue),
        "--script",
        str(script),
        home=tmp_path,
        stdin="what is open?\n",
        capsys=capsys,
    )
    assert ran.status == 0, ran.err
    assert "needs a login" in ran.out
    assert "WARNING" not in ran.err and "could not resolve credentials" not in ran.err
