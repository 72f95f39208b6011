"""Helpers of the command's tests: a catalogue file, a login stored where the command reads
it, and the command run in this process."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import httpx2
import pytest

from glove_mcp.cli import main
from glove_mcp.oauth import FsOAuthStore, run_mcp_oauth

STDIO = (sys.executable, "-m", "glove_mcp.testing", "notes", "--stdio")
"""A stdio server the tests can start."""


def catalogue(path: Path, **servers: str | Sequence[str]) -> Path:
    """A TOML catalogue: each keyword is an id, its value a URL or a stdio command."""
    lines = ["# written by the test", ""]
    for server_id, target in servers.items():
        lines += ["[[servers]]", f'id = "{server_id}"', f'name = "{server_id.title()}"']
        lines.append(f'description = "The {server_id} server."')
        if isinstance(target, str):
            lines.append(f'url = "{target}"')
        else:
            lines.append("command = [" + ", ".join(f'"{part}"' for part in target) + "]")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


async def follow(url: str) -> str:
    """A browser that approves at once: open the URL, return where it redirects."""
    async with httpx2.AsyncClient(follow_redirects=False) as client:
        response = await client.get(url)
    assert response.status_code in (302, 303, 307), response.text
    return response.headers["location"]


async def log_in(url: str, home: Path, key: str) -> FsOAuthStore:
    """Log in to ``url`` as ``glove-mcp auth`` would, into the token file under ``home``."""
    store = FsOAuthStore(home / "oauth.json")
    await run_mcp_oauth(url, store, key, authorize=follow)
    return store


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``glove-mcp ARGS`` in this process: exit status, stdout, stderr."""
    capsys.readouterr()
    try:
        status = main(list(args))
    except SystemExit as exited:  # argparse's errors and --help
        status = exited.code if isinstance(exited.code, int) else 2
    out, err = capsys.readouterr()
    return status, out, err
