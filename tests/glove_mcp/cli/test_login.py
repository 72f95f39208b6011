"""``glove-mcp auth --force``: a new login even when the stored tokens still work; a forced
login that fails keeps the tokens it started from."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import httpx2
import pytest

from glove_mcp.oauth import FsOAuthStore
from glove_mcp.resource_keys import credential_key
from tests.glove_mcp.cli._commands import Servers
from tests.glove_mcp.cli._support import catalogue, follow, log_in, run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    return tmp_path


def access_token(home: Path, url: str) -> str:
    """The tracker's stored access token: under its resource-bound key once a command used it,
    under the catalogue id before (a login stored by an older writer, not yet migrated)."""
    store = FsOAuthStore(home / "oauth.json")
    state = asyncio.run(store.get(credential_key("default", url))) or asyncio.run(
        store.get("tracker")
    )
    assert state is not None and state.tokens is not None
    return state.tokens.access_token.get_secret_value()


def test_without_force_working_tokens_are_kept(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", tracker=servers.oauth)
    asyncio.run(log_in(servers.oauth, home, "tracker"))
    before = access_token(home, servers.oauth)
    status, out, _ = run(capsys, "auth", "tracker", "--no-browser", "--catalogue", str(file))
    assert status == 0 and "tracker: ALREADY_AUTHORIZED" in out
    assert access_token(home, servers.oauth) == before


async def _forced_login(file: Path, home: Path) -> tuple[int, str]:
    """``glove-mcp auth tracker --force`` in a child, its browser approving."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "glove_mcp.cli", "auth", "tracker", "--force"),
        *("--no-browser", "--port", "0", "--catalogue", str(file)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "GLOVE_HOME": str(home), "PYTHONUNBUFFERED": "1"},
    )
    assert process.stderr is not None and process.stdout is not None
    url = None
    while url is None:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, "the login never printed its URL"
        found = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S+)", line)
        url = found.group(1) if found else None
    callback = await follow(url)  # the person approves; the browser lands on the listener
    async with httpx2.AsyncClient() as client:
        await client.get(callback)
    out = (await asyncio.wait_for(process.stdout.read(), 60)).decode()
    return await process.wait(), out


def test_force_logs_in_again_though_the_tokens_work(home: Path, servers: Servers) -> None:
    file = catalogue(home / "servers.toml", tracker=servers.oauth)
    asyncio.run(log_in(servers.oauth, home, "tracker"))
    before = access_token(home, servers.oauth)
    status, out = asyncio.run(_forced_login(file, home))
    assert status == 0, out
    assert "tracker: AUTHORIZED" in out and "ALREADY" not in out
    assert access_token(home, servers.oauth) != before


def test_a_forced_login_that_fails_keeps_the_old_tokens(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", tracker=servers.oauth)
    asyncio.run(log_in(servers.oauth, home, "tracker"))
    before = (home / "oauth.json").read_text()
    args = ("auth", "tracker", "--force", "--no-browser", "--port", "0", "--catalogue", str(file))
    status, _, err = run(capsys, *args, "--timeout", "0.5")  # nobody approves
    assert status == 1 and "within 0.5 s" in err
    assert access_token(home, servers.oauth) in before
    status, out, _ = run(capsys, "status", "--catalogue", str(file))
    assert out.startswith("tracker          logged in")


def test_force_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "auth", "--help")
    assert status == 0 and "--force" in out and "glove-mcp auth notion --force" in out
