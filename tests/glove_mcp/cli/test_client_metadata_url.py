"""``glove-mcp auth --client-metadata-url URL`` and ``serve --client-metadata-url URL``: the URL
is checked before anything is opened, and reaches the login (where the authorization server
has no Client ID Metadata Document support, the login registers dynamically and says, in one
log line, that this is deprecated)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import httpx2
import pytest

from tests.glove_mcp.cli._commands import Servers
from tests.glove_mcp.cli._support import catalogue, follow, run

DOCUMENT = "https://glove.example/oauth/client.json"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    return tmp_path


@pytest.mark.parametrize(
    "url", ["http://glove.example/client.json", "https://glove.example/", "client.json"]
)
def test_auth_refuses_a_url_that_cannot_be_a_client_id(
    home: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    file = catalogue(home / "servers.toml", tracker="https://tracker.example/mcp")
    status, _, err = run(
        capsys, "auth", "tracker", "--client-metadata-url", url, "--catalogue", str(file)
    )
    assert status == 2
    assert "--client-metadata-url must be an HTTPS URL with a path" in err
    assert not (home / "oauth.json").exists()


def test_auth_refuses_two_clients_at_once(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = catalogue(home / "servers.toml", tracker="https://tracker.example/mcp")
    status, _, err = run(
        capsys,
        *("auth", "tracker", "--client-id", "abc", "--client-metadata-url", DOCUMENT),
        *("--catalogue", str(file)),
    )
    assert status == 2
    assert "--client-metadata-url and --client-id name two different clients" in err


def test_serve_refuses_a_url_that_cannot_be_a_client_id(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_API_KEY", "k" * 32)
    file = catalogue(home / "servers.toml", tracker="https://tracker.example/mcp")
    status, _, err = run(
        capsys,
        *("serve", "--client-metadata-url", "http://glove.example/c.json"),
        *("--catalogue", str(file), "--port", "0"),
    )
    assert status == 2
    assert "--client-metadata-url must be an HTTPS URL with a path" in err


async def _login(file: Path, home: Path) -> tuple[int, str, str]:
    """``glove-mcp auth tracker --client-metadata-url ...`` in a child, its browser approving."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "glove_mcp.cli", "auth", "tracker", "--client-metadata-url"),
        *(DOCUMENT, "--no-browser", "--port", "0", "--catalogue", str(file)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "GLOVE_HOME": str(home), "PYTHONUNBUFFERED": "1"},
    )
    assert process.stderr is not None and process.stdout is not None
    url: str | None = None
    seen: list[str] = []
    while url is None:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, "the login never printed its URL: " + "".join(seen)
        seen.append(line)
        found = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S+)", line)
        url = found.group(1) if found else None
    callback = await follow(url)
    async with httpx2.AsyncClient() as client:
        await client.get(callback)
    out = (await asyncio.wait_for(process.stdout.read(), 60)).decode()
    err = "".join(seen) + (await process.stderr.read()).decode()
    return await process.wait(), out, err


def test_without_server_support_auth_registers_and_notes_the_deprecation(
    home: Path, servers: Servers
) -> None:
    file = catalogue(home / "servers.toml", tracker=servers.oauth)
    status, out, err = asyncio.run(_login(file, home))
    assert status == 0, err
    assert "tracker: AUTHORIZED" in out
    notes = [line for line in err.splitlines() if "registered dynamically" in line]
    assert len(notes) == 1
    assert "does not support Client ID Metadata Documents" in notes[0]
