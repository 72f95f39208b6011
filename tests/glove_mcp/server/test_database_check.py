"""Issue 16, item 19, the cost side: the page check reads the whole file, so the headless
server runs it once — with the first session it opens — instead of once for every session's
store, queue and adapter. ``check_pages=False`` is what the later ones pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from glove_core import SqliteEventQueue, SqliteStore
from glove_core.errors import StoreCorruptError
from glove_mcp.adapter import SqliteMcpAdapter
from glove_mcp.server import HeadlessServer
from tests.glove_core.test_sqlite_integrity import _garble, _store_file
from tests.glove_mcp.server._harness import KEY, running, simple_factory


async def _damaged(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "chat.db"
    await _store_file(path)
    _garble(path, offset_in_page=0, length=4096)
    return path, path.read_bytes()


async def test_check_pages_false_skips_the_check_and_the_default_does_not(
    tmp_path: Path,
) -> None:
    path, _ = await _damaged(tmp_path)
    for unchecked in (
        SqliteStore(path, "other", check_pages=False),
        SqliteEventQueue(path, "other", check_pages=False),
        SqliteMcpAdapter(path, "other", check_pages=False),
    ):
        await unchecked.open()  # trusts a check this process made earlier
        await unchecked.aclose()
    with pytest.raises(StoreCorruptError):
        await SqliteStore(path, "other").open()


async def test_the_server_refuses_a_damaged_file_on_its_first_session(tmp_path: Path) -> None:
    path, before = await _damaged(tmp_path)
    server = HeadlessServer(str(path), KEY, simple_factory())
    async with running(server) as client:
        first = await client.post("/sessions", json={"id": "one"})
        again = await client.get("/sessions/s")
    assert first.status_code >= 500 and again.status_code >= 500
    assert "Traceback" not in first.text
    assert path.read_bytes() == before


async def test_the_server_checks_the_file_once_not_at_every_session_open(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.db"
    await _store_file(path)  # a conversation whose messages fill the middle of the file
    server = HeadlessServer(str(path), KEY, simple_factory())
    async with running(server) as client:
        assert (await client.post("/sessions", json={"id": "one"})).status_code == 201
        # A page of that conversation goes bad after the check. Opening another session
        # does not read it; a check at every open (a read of the whole file) would refuse.
        pages = path.stat().st_size // 4096
        with path.open("r+b") as file:
            file.seek((pages // 2) * 4096)
            file.write(bytes(4096))
        assert (await client.post("/sessions", json={"id": "two"})).status_code == 201
        assert (await client.get("/sessions/two")).status_code == 200
