"""``glove-mcp servers set-url``, ``servers test`` and ``servers remove``'s offer to forget
the server's tokens, against the local test servers and a real token file."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest

from glove_mcp.oauth import FsOAuthStore
from tests.glove_mcp.cli._commands import Servers
from tests.glove_mcp.cli._support import STDIO, catalogue, log_in, run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    return tmp_path


def has_tokens(home: Path, key: str) -> bool:
    return asyncio.run(FsOAuthStore(home / "oauth.json").get(key)) is not None


# -- set-url ----------------------------------------------------------------------------------


def test_set_url_changes_the_url_and_keeps_the_file(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", docs="https://old.example/mcp", local=STDIO)
    status, out, _ = run(
        capsys, "servers", "set-url", "docs", "https://new.example/mcp", "--catalogue", str(file)
    )
    assert status == 0 and "https://old.example/mcp -> https://new.example/mcp" in out
    text = file.read_text()
    assert 'url = "https://new.example/mcp"' in text and "old.example" not in text
    assert text.startswith("# written by the test")  # comments kept


def test_set_url_refuses_what_it_cannot_do_and_changes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", docs="https://old.example/mcp", local=STDIO)
    before = file.read_text()
    where = ("--catalogue", str(file))
    status, _, err = run(capsys, "servers", "set-url", "docs", "ftp://x/", *where)
    assert status == 2 and "servers set-url: URL: 'ftp://x/' is not an http:// or https://" in err
    status, _, err = run(capsys, "servers", "set-url", "local", "https://x/mcp", *where)
    assert status == 2 and "'local' is a stdio server" in err
    status, _, err = run(capsys, "servers", "set-url", "doc", "https://x/mcp", *where)
    assert status == 2 and "no server 'doc'" in err and "did you mean 'docs'?" in err
    assert file.read_text() == before


# -- test -------------------------------------------------------------------------------------


def test_servers_test_lists_the_tools_of_servers_that_answer(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", open=servers.open, local=STDIO)
    status, out, _ = run(capsys, "servers", "test", "open", "--catalogue", str(file))
    assert status == 0
    assert out.startswith("open: ok, ") and "\n  list_issues\n" in out
    status, out, _ = run(capsys, "servers", "test", "local", "--json", "--catalogue", str(file))
    assert status == 0
    found = json.loads(out)
    assert found["state"] == "ok" and found["tools"]


def test_servers_test_fails_when_the_server_does_not_answer_as_it_should(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(
        home / "servers.toml",
        tracker=servers.oauth,
        down="http://127.0.0.1:9/mcp",
        ghost=["no-such-mcp-server-command"],
    )
    where = ("--catalogue", str(file))
    status, out, _ = run(capsys, "servers", "test", "tracker", *where)
    assert status == 1 and out.startswith("tracker: needs login: ")
    assert f"glove-mcp auth tracker --catalogue {file}" in out
    status, out, _ = run(capsys, "servers", "test", "down", *where)
    assert status == 1 and out.startswith("down: unreachable: ")
    status, out, _ = run(capsys, "servers", "test", "ghost", *where)
    assert status == 1 and out.startswith("ghost: failed: ")
    # With the tokens of a login, the same server answers.
    asyncio.run(log_in(servers.oauth, home, "tracker"))
    status, out, _ = run(capsys, "servers", "test", "tracker", *where)
    assert status == 0 and out.startswith("tracker: ok, ")


# -- remove and the tokens --------------------------------------------------------------------


@pytest.fixture
def logged_in(home: Path, servers: Servers) -> Path:
    file = catalogue(home / "servers.toml", tracker=servers.oauth, open=servers.open)
    asyncio.run(log_in(servers.oauth, home, "tracker"))
    return file


def test_remove_keeps_the_tokens_without_a_terminal_and_says_so(
    home: Path, logged_in: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "servers", "remove", "tracker", "--catalogue", str(logged_in))
    assert status == 0
    assert "tracker: removed from" in out
    assert "its stored tokens were kept (no terminal to ask; --forget-tokens deletes them)" in out
    assert has_tokens(home, "tracker")
    # ... and they can still be deleted by id, though the server is gone from the catalogue.
    status, out, _ = run(capsys, "logout", "tracker", "--local-only", "--catalogue", str(logged_in))
    assert status == 0 and "its stored tokens were deleted" in out
    assert not has_tokens(home, "tracker")


def test_remove_forgets_or_keeps_the_tokens_as_the_flags_say(
    home: Path, logged_in: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ("--catalogue", str(logged_in))
    status, out, _ = run(capsys, "servers", "remove", "tracker", "--keep-tokens", *where)
    assert status == 0 and "tokens were kept;" in out and "no terminal" not in out
    assert has_tokens(home, "tracker")
    status, _, _ = run(capsys, "servers", "add", "tracker", "https://x.example/mcp", *where)
    assert status == 0
    status, out, _ = run(capsys, "servers", "remove", "tracker", "--forget-tokens", *where)
    assert status == 0 and "its stored tokens were deleted (not revoked" in out
    assert not has_tokens(home, "tracker")
    status, _, err = run(
        capsys, "servers", "remove", "open", "--forget-tokens", "--keep-tokens", *where
    )
    assert status == 2 and "not allowed with argument" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "forgotten"), [("y\n", True), ("\n", False), ("no\n", False)])
def test_remove_asks_on_a_terminal(
    home: Path,
    logged_in: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    forgotten: bool,
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    status, out, _ = run(capsys, "servers", "remove", "tracker", "--catalogue", str(logged_in))
    assert status == 0
    assert "tracker has stored tokens. Forget them too? [y/N]" in out
    assert has_tokens(home, "tracker") is not forgotten


def test_remove_without_tokens_says_nothing_about_them(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", tracker=servers.oauth, open=servers.open)
    status, out, _ = run(capsys, "servers", "remove", "open", "--catalogue", str(file))
    assert status == 0 and out == f"open: removed from {file}\n"
