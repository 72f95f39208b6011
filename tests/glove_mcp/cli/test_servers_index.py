"""``glove-mcp servers index``: every reachable server's tools kept in the chat database ahead
of use, against the local test servers (open, behind OAuth, stdio) and a real token file."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp.server.caching import CacheHint

from glove_mcp import SqliteMcpAdapter
from glove_mcp.adapter import LearnedListing, LearnedTool
from glove_mcp.testing import McpTestServer
from glove_mcp.testing.servers import build_notes_server
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


def listings(db: Path) -> dict[str, LearnedListing]:
    async def read() -> dict[str, LearnedListing]:
        async with SqliteMcpAdapter(db, "reader") as adapter:
            return await adapter.get_learned_listings()

    return asyncio.run(read())


@contextmanager
def cached_notes(instructions: str, ttl_ms: int) -> Iterator[McpTestServer]:
    """The notes server with ``instructions``, its tools listed with ``ttlMs``, served on a
    loop of its own (the command runs its own in this thread)."""
    hints = {"tools/list": CacheHint(ttl_ms=ttl_ms, scope="public")}
    server = McpTestServer(build_notes_server(instructions=instructions, cache_hints=hints))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(30)
        try:
            yield server
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(30)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


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


def test_index_keeps_instructions_and_skips_a_fresh_listing_until_refresh(
    home: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    said = "Answers questions about the fleet handbook."
    with cached_notes(said, 600_000) as fleet:
        file = catalogue(home / "servers.toml", fleet=fleet.url, open=servers.open)
        db = home / "chat.db"
        index = ("servers", "index", "--catalogue", str(file), "--db", str(db))
        status, out, _ = run(capsys, *index)
        assert status == 0
        assert out.strip().splitlines()[-1] == f"2 of 2 servers listed into {db}"
        kept = listings(db)
        assert (kept["fleet"].instructions, kept["fleet"].ttl_ms) == (said, 600_000)
        assert kept["open"].ttl_ms is None  # the tracker gives no TTL

        status, out, _ = run(capsys, *index)
        assert status == 0
        lines = out.strip().splitlines()
        count = len(learned(db)["fleet"])
        fresh = f"fleet: fresh, not listed again: {count} tools kept, fresh until "
        assert lines[0].startswith(fresh) and lines[0].endswith(" UTC")
        assert lines[-1] == (
            f"1 of 2 servers listed into {db}; 1 still fresh, not listed again "
            "(--refresh lists them)"
        )
        assert fleet.control.methods["tools/list"] == 1

        status, out, _ = run(capsys, *index, "fleet", "--refresh", "--json")
        assert status == 0
        (row,) = json.loads(out)
        assert row["state"] == "listed" and row["instructions"] == said
        assert row["ttl_ms"] == 600_000
        assert fleet.control.methods["tools/list"] == 2

        # Only fresh servers asked for: nothing failed, so status 0.
        status, out, _ = run(capsys, *index, "fleet")
        assert status == 0
        assert out.strip().splitlines()[-1].startswith(f"0 of 1 servers listed into {db}; 1 ")


def test_index_refuses_a_value_for_refresh(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = catalogue(home / "servers.toml", down="http://127.0.0.1:9/mcp")
    status, _, err = run(capsys, "servers", "index", "--refresh=yes", "--catalogue", str(file))
    assert status == 2 and "--refresh: ignored explicit argument 'yes'" in err
