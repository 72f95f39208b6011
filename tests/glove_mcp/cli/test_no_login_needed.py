"""Issue 21, item 3: ``auth`` and ``status`` know servers that need no login. ``auth`` on an
open HTTP server or a stdio server says so and writes nothing; ``status`` shows stdio servers
as needing no login, and ``status --check`` asks the HTTP servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.glove_mcp.cli._commands import Servers, in_process, run_cli, write_catalogue

STDIO = (sys.executable, "-m", "glove_mcp.testing", "notes", "--stdio")


def test_auth_on_an_open_server_and_a_stdio_server_writes_nothing(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", open=servers.open, local=STDIO)

    ran = in_process("auth", "open", "--catalogue", str(catalogue), home=tmp_path, capsys=capsys)
    assert ran.status == 0, ran.err
    assert f"open: {servers.open} answers without a login" in ran.out
    assert "needs none; nothing was saved" in ran.out
    assert "logged in" not in ran.out and "AUTHORIZED" not in ran.out

    ran = in_process("auth", "local", "--catalogue", str(catalogue), home=tmp_path, capsys=capsys)
    assert ran.status == 0, ran.err
    assert "local: a stdio server" in ran.out and "needs no login; nothing was saved" in ran.out
    assert "cannot reach" not in ran.out + ran.err

    assert not (tmp_path / "oauth.json").exists()


def test_status_tells_stdio_open_and_oauth_servers_apart(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(
        tmp_path / "servers.toml",
        open=servers.open,
        tracker=servers.oauth,
        local=STDIO,
        ghost=["no-such-mcp-server-command"],
    )
    ran = run_cli("status", "--catalogue", str(catalogue), home=tmp_path)
    assert ran.status == 0, ran.err
    lines = dict(line.split(None, 1) for line in ran.out.splitlines())
    assert lines["local"].startswith("no login needed  (stdio server)")
    assert "command 'no-such-mcp-server-command' not found" in lines["ghost"]
    assert lines["open"].startswith("not logged in")  # without --check, nobody was asked

    # A child process: --check starts the stdio server, which needs a real stderr.
    ran = run_cli("status", "--check", "--catalogue", str(catalogue), home=tmp_path)
    assert ran.status == 1, ran.err  # tracker needs a login, ghost fails (issue 32.6)
    lines = dict(line.split(None, 1) for line in ran.out.splitlines())
    assert lines["open"].startswith("no login needed  (open)")
    assert lines["tracker"] == (
        f"not logged in    (run: glove-mcp auth tracker --catalogue {catalogue})"
    )
    assert lines["local"].startswith("no login needed  (stdio server)")

    ran = run_cli("status", "--check", "--json", "--catalogue", str(catalogue), home=tmp_path)
    rows = {row["id"]: row for row in json.loads(ran.out)}
    assert rows["open"]["state"] == "no_login_needed" and rows["open"]["login_command"] is None
    assert rows["tracker"]["state"] == "needs_login"
    assert rows["local"]["transport"] == "stdio" and rows["local"]["state"] == "no_login_needed"
    assert not (tmp_path / "oauth.json").exists()


async def test_a_server_naming_its_metadata_only_in_www_authenticate_uses_oauth() -> None:
    # The MCP authorization spec's first place to look: the 401's resource_metadata URL,
    # here at a path no well-known lookup would guess.
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from glove_mcp.catalogue import McpCatalogueEntry
    from glove_mcp.cli.probe import probe
    from glove_mcp.testing import serve

    async def mcp(request: Request) -> Response:
        where = f"{request.base_url}meta/resource"
        challenge = f'Bearer resource_metadata="{where}"'
        return Response(status_code=401, headers={"WWW-Authenticate": challenge})

    async def meta(request: Request) -> Response:
        return JSONResponse({"resource": str(request.base_url), "authorization_servers": []})

    def app() -> Starlette:
        return Starlette(
            routes=[
                Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
                Route("/meta/resource", meta),
            ]
        )

    async with serve(app) as url:
        entry = McpCatalogueEntry(id="odd", name="Odd", description="d", url=url)
        reach = await probe(entry, timeout=5)
    assert reach.access == "oauth", reach
