"""``glove-mcp servers index``: every reachable server's tools kept in the chat database ahead
of use, against the local test servers (open, behind OAuth, stdio) and a real token file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from glove_mcp import SqliteMcpAdapter
from glove_mcp.adapter import LearnedTool
from tests.glove_mcp.cli._commands import Servers
from tests.glove_mcp.cli._support import STDIO, catalogue, log_in, run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_DATABASE_URL", raising=False)
    return tmp_path


def learned(db: Path) -> dict[str, list[LearnedTool]]:
    async def read() -> dict[str, list[LearnedTool]]:
        async with SqliteMcpAdapter(db, "reader") as adapter:
            return await adapter.get_learned_tools()

    return asyncio.run(read())


def test_index_lists_what_it_can_reach_and_skips_the_rest_with_one_line(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(
        home / "servers.toml",
        open=servers.open,
        local=STDIO,
        tracker=servers.oauth,
        down="http://127.0.0.1:9/mcp",
    )
    db = home / "chat.db"
    status, out, err = run(capsys, "servers", "index", "--catalogue", str(file), "--db", str(db))
    assert status == 0
    lines = out.strip().splitlines()
    assert sorted(lines[:-1]) == sorted(
        [f"open: {len(learned(db)['open'])} tools", f"local: {len(learned(db)['local'])} tools"]
    )
    assert lines[-1] == f"2 of 4 servers listed into {db}"
    skipped = err.strip().splitlines()
    assert len(skipped) == 2
    assert any(
        s.startswith("tracker: skipped: it needs a login: run glove-mcp auth tracker")
        for s in skipped
    )
    assert any(s.startswith("down: skipped: ") for s in skipped)
    assert set(learned(db)) == {"open", "local"}
    # After a login, the same server is listed too (with the token issued for its URL).
    asyncio.run(log_in(servers.oauth, home, "tracker"))
    status, out, _ = run(
        capsys, "servers", "index", "tracker", "--json", "--catalogue", str(file), "--db", str(db)
    )
    assert status == 0
    (row,) = json.loads(out)
    assert row["id"] == "tracker" and row["state"] == "listed" and "list_issues" in row["tools"]
    assert set(learned(db)) == {"open", "local", "tracker"}


def test_index_of_nothing_reachable_exits_1_and_an_unknown_id_2(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = catalogue(home / "servers.toml", down="http://127.0.0.1:9/mcp")
    status, out, err = run(capsys, "servers", "index", "--catalogue", str(file))
    assert status == 1
    assert out.strip().endswith("0 of 1 servers listed into " + str(home / "chat.db"))
    assert err.startswith("down: skipped: ")
    status, _, err = run(capsys, "servers", "index", "dwn", "--catalogue", str(file))
    assert status == 2 and "no server 'dwn' in the catalogue" in err and "'down'" in err
