"""Issue 21, item 2: an OAuth login that fails (no approval in time, consent denied, a pasted
answer that is not one, a server that does not use OAuth, a server that is down) ends in one
line naming the server and what to do, with no SDK traceback. The failed logins run the
command in a process of its own (nothing else reaches its stderr, to its exit); the servers
that cannot log in at all run it in-process (the line is the point)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import (
    Servers,
    authorize_url,
    browse,
    in_process,
    run_cli,
    serving,
    start_cli,
    write_catalogue,
)


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and "ExceptionGroup" not in err and "ERROR" not in err


def test_pasted_garbage_and_timeout(tmp_path: Path, servers: Servers) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    args = ("auth", "tracker", "--no-browser", "--port", "0", "--catalogue", str(catalogue))

    ran = run_cli(*args, home=tmp_path, stdin=b"not a code\n")
    assert ran.status == 1 and "AUTHORIZED" not in ran.out
    [line] = ran.error_lines
    assert line.startswith("glove-mcp: tracker: OAuth login for 'tracker' at ")
    assert "invalid_grant" in line
    _no_traceback(ran.err)

    ran = run_cli(*args, "--timeout", "0.5", home=tmp_path)
    assert ran.status == 1
    [line] = ran.error_lines
    assert "within 0.5 s" in line and "--timeout SECONDS" in line and "--no-browser" in line
    assert "open_browser" not in line
    _no_traceback(ran.err)


async def test_denied_consent(tmp_path: Path, servers: Servers) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.denied)
    process = await start_cli(
        "auth",
        "tracker",
        "--no-browser",
        "--port",
        "0",
        "--catalogue",
        str(catalogue),
        home=tmp_path,
    )
    assert process.stderr is not None
    seen = ""
    url = None
    while url is None:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, f"the login never printed its URL: {seen}"
        seen += line
        url = authorize_url(line)
    await browse(url)  # the authorization server redirects back with error=access_denied
    _, err = await asyncio.wait_for(process.communicate(), 60)
    text = seen + err.decode()
    assert process.returncode == 1
    [line] = [t for t in text.splitlines() if t.startswith("glove-mcp:")]
    assert "tracker" in line and "access_denied" in line and "not granted" in line
    _no_traceback(text)


def test_a_server_without_oauth_and_a_server_that_is_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", down="http://127.0.0.1:9/mcp")
    ran = in_process("auth", "down", "--catalogue", str(catalogue), home=tmp_path, capsys=capsys)
    assert ran.status == 1
    [line] = ran.error_lines
    assert "cannot reach http://127.0.0.1:9/mcp" in line
    assert f"glove-mcp auth down --catalogue {catalogue}" in line
    _no_traceback(ran.err)
    assert not (tmp_path / "oauth.json").exists()


def test_a_server_that_wants_a_token_but_has_no_oauth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A server that answers 401 to anything but a fixed token, and publishes no OAuth
    # metadata: no login can get that token.
    with serving(("tracker", "--token", "fixed")) as [url]:
        catalogue = write_catalogue(tmp_path / "servers.toml", locked=url)
        ran = in_process(
            "auth", "locked", "--catalogue", str(catalogue), home=tmp_path, capsys=capsys
        )
    assert ran.status == 1
    [line] = ran.error_lines
    assert "needs credentials but does not use OAuth" in line and "Nothing was saved" in line
    _no_traceback(ran.err)
    assert not (tmp_path / "oauth.json").exists()
