"""Issue 20: with ``--database`` the OAuth tokens live in the PostgreSQL database, shared by
every ``glove-mcp serve`` instance, refreshed once across them.

Real parts throughout: the local OAuth authorization server (in this process, so the test
reads its counters and expires its tokens) protecting a tracker MCP server, ``glove-mcp
auth`` / ``status`` / ``logout`` and two ``glove-mcp serve`` processes as subprocesses, and a
real PostgreSQL database.
"""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

import argparse
import asyncio
import json
import shlex
import socket
import time
from pathlib import Path

import httpx2
import pytest

from glove_core.postgres import PostgresDatabase
from glove_mcp.adapter_postgres import PostgresMcpAdapter
from glove_mcp.cli import main
from glove_mcp.cli.errors import command_hint
from glove_mcp.cli.token_kind import DATABASE_ENV
from glove_mcp.oauth import credential_key
from glove_mcp.oauth.postgres_store import PostgresOAuthStore
from glove_mcp.testing.oauth_server import serve_oauth_server
from glove_mcp.testing.servers import build_tracker_server
from tests.glove_mcp.cli._commands import (
    Ran,
    authorize_url,
    browse,
    in_process,
    run_cli,
    start_cli,
    write_catalogue,
)
from tests.glove_mcp.server._harness import AUTH, serve_process, sse_events

_LIST = {"tool_calls": [{"name": "tracker__list_issues", "input": {}}]}
SCRIPT = {"from_history": True, "replies": [_LIST, "done"]}


async def _cli(*args: str, home: Path) -> Ran:
    """Run ``glove-mcp ARGS`` without blocking this loop (the OAuth server runs on it)."""
    process = await start_cli(*args, home=home)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return Ran(process.returncode, out.decode(), err.decode())


async def _login(catalogue: Path, url: str, home: Path) -> None:
    """``glove-mcp auth tracker --database URL``, the person's browser approving."""
    process = await start_cli(
        "auth",
        "tracker",
        "--database",
        url,
        "--no-browser",
        "--port",
        "0",
        "--catalogue",
        str(catalogue),
        home=home,
    )
    assert process.stderr is not None
    seen, consent = "", None
    while consent is None:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, f"the login never printed its URL: {seen}"
        seen += line
        consent = authorize_url(line)
    await browse(consent)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, (seen, out, err)
    assert "tracker: " in out.decode()


async def _ask(http: httpx2.AsyncClient, base: str, sid: str, text: str) -> None:
    """One request whose tool call reached the protected server and succeeded."""
    response = await http.post(f"{base}/sessions/{sid}/messages", headers=AUTH, json={"text": text})
    assert response.status_code == 200, response.text
    results = [data for name, data in sse_events(response.text) if name == "tool_result"]
    assert results and all(r["status"] == "success" for r in results), results


async def test_serve_instances_share_the_database_tokens_and_refresh_once(
    tmp_path: Path, postgres_url: str
) -> None:
    async with (
        serve_oauth_server(build_tracker_server) as protected,
        PostgresDatabase(postgres_url) as db,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        catalogue = write_catalogue(tmp_path / "servers.toml", tracker=protected.url)
        counters = protected.provider.counters

        # -- auth --database: the tokens go to the database, not to oauth.json --------------
        await _login(catalogue, postgres_url, tmp_path)
        assert not (tmp_path / "oauth.json").exists()
        store = PostgresOAuthStore(db)
        key = credential_key("default", protected.url)  # by principal and resource
        state = await store.get(key)
        assert state is not None and state.tokens is not None and state.client is not None
        # Keyed by server and issuer (as the authorization server's metadata spells it).
        assert state.issuer is not None and state.issuer.rstrip("/") == protected.issuer
        assert await store.find(protected.url, state.issuer) == [key]
        shown = await _cli(
            "status", "--database", postgres_url, "--catalogue", str(catalogue), home=tmp_path
        )
        assert shown.status == 0, shown.err
        assert "tracker" in shown.out and "logged in" in shown.out, shown.out
        assert (counters.registrations, counters.code_exchanges) == (1, 1)

        # -- two instances call the protected server with the database's token -------------
        catalogue_text = catalogue.read_text(encoding="utf-8")
        async with (
            serve_process(
                tmp_path, database=postgres_url, script=SCRIPT, catalogue_text=catalogue_text
            ) as first,
            serve_process(
                tmp_path,
                database=postgres_url,
                script=SCRIPT,
                catalogue_text=catalogue_text,
                name="second",
            ) as second,
        ):
            for base, sid in ((first.url, "a"), (second.url, "b")):
                await PostgresMcpAdapter(db, sid).activate("tracker")
                created = await http.post(f"{base}/sessions", headers=AUTH, json={"id": sid})
                assert created.status_code == 201, created.text
                await _ask(http, base, sid, "list the issues")
            # No new login, registration or refresh: both used the token `auth` stored.
            assert (counters.registrations, counters.token_requests) == (1, 1)
            unchanged = await store.get(key)
            assert unchanged is not None and unchanged.tokens == state.tokens

            # -- the access token expires: both instances call; one refresh in all ---------
            assert protected.provider.expire_access_tokens() >= 1
            expired = state.tokens.model_copy(update={"expires_at": time.time() - 60})
            await store.set(key, state.model_copy(update={"tokens": expired}))
            await asyncio.gather(
                _ask(http, first.url, "a", "again"),
                _ask(http, second.url, "b", "again"),
            )
            assert counters.refresh_requests == 1
            assert counters.refresh_rejected == 0
            rotated = await store.get(key)
            assert rotated is not None and rotated.tokens is not None
            assert rotated.tokens.refresh_token != state.tokens.refresh_token

        # -- logout --database deletes them there ------------------------------------------
        gone = await _cli(
            "logout",
            "tracker",
            "--database",
            postgres_url,
            "--catalogue",
            str(catalogue),
            home=tmp_path,
        )
        assert gone.status == 0, gone.err
        assert "revoked" in gone.out
        assert await store.get(key) is None


def test_a_bad_database_for_auth_is_one_line_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    base = ("auth", "tracker", "--catalogue", str(catalogue))

    malformed = in_process(*base, "--database", "mysql://db/glove", home=tmp_path, capsys=capsys)
    assert malformed.status == 2
    assert malformed.error_lines == [
        "glove-mcp: --database must be a postgresql:// URL, e.g. "
        "postgresql://user:password@host/glove"
    ]
    both = in_process(
        *base, "--store", "file", "--database", "postgresql://db/g", home=tmp_path, capsys=capsys
    )
    assert both.status == 2
    assert both.error_lines == [
        "glove-mcp: give --store file or --database, not both: --database keeps the OAuth "
        "tokens in that database"
    ]

    url = "postgresql://glove:s3cret@127.0.0.1:9/glove?connect_timeout=1"
    down_args = ("--database", url, "--database-timeout", "1")
    # auth in a process of its own (nothing but the line on its stderr, to its exit), status
    # in this one (the same line from the same check).
    for down in (
        run_cli(*base, *down_args, home=tmp_path),
        in_process(
            "status", "--catalogue", str(catalogue), *down_args, home=tmp_path, capsys=capsys
        ),
    ):
        assert down.status == 1, down.err
        assert down.err.strip().count("\n") == 0, down.err  # one line, no pool noise
        [line] = down.error_lines
        assert line.startswith("glove-mcp: --database postgresql://glove:***@127.0.0.1:9/glove")
        assert "did not answer within 1 s" in line
        assert "s3cret" not in down.err + down.out
    assert not (tmp_path / "oauth.json").exists()


def test_serve_keeps_tokens_in_its_database_unless_store_is_given(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.setenv("GLOVE_API_KEY", "test-key-for-serve-0123456789")
    monkeypatch.delenv(DATABASE_ENV, raising=False)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["ok"]))
    serve = ["serve", "--script", str(script), "--database", postgres_url]

    def components() -> set[str]:
        import psycopg

        with psycopg.connect(postgres_url) as conn:
            rows = conn.execute("SELECT component FROM glove_store_schema").fetchall()
        return {str(row[0]) for row in rows}

    # The port is taken: the command stops after its start-up checks of the database.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert main([*serve, "--store", "file", "--port", port]) == 1
        assert "glove_mcp.oauth" not in components()  # --store file: tokens on this machine
        assert main([*serve, "--port", port]) == 1
        assert "glove_mcp.oauth" in components()  # the default: the database's token table


def test_login_hints_name_the_database_without_its_password(
    tmp_path: Path,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv(DATABASE_ENV, raising=False)
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    args = ["status", "--catalogue", str(catalogue), "--json"]
    login = ["glove-mcp", "auth", "tracker", "--catalogue", str(catalogue)]

    def hint(*more: str) -> str:
        capsys.readouterr()
        assert main([*args, *more]) == 0
        [row] = json.loads(capsys.readouterr().out)
        assert row["state"] == "no_tokens"
        return str(row["login_command"])

    assert hint("--database", postgres_url) == shlex.join([*login, "--database", postgres_url])
    monkeypatch.setenv(DATABASE_ENV, postgres_url)  # the variable works as the flag does
    assert hint() == shlex.join([*login, "--database", postgres_url])
    # An explicit --store wins over the variable, and the hint keeps it.
    assert hint("--store", "file") == shlex.join([*login, "--store", "file"])
    assert not (tmp_path / "oauth.json").exists()

    secret = argparse.Namespace(catalogue=None, store=None, database="postgresql://g:pw@db/x")
    assert command_hint(secret, "auth", "notion") == (
        "glove-mcp auth notion --database 'postgresql://g:***@db/x'"
    )
    assert command_hint(argparse.Namespace(store="keyring"), "auth", "notion") == (
        "glove-mcp auth notion --store keyring"
    )
    # chat has no --database: the variable does not leak into its hints.
    assert command_hint(argparse.Namespace(store=None), "chat") == "glove-mcp chat"
