"""Issue 16, item 14: ten concurrent ``POST /sessions`` with one id all got 201.

The server checked for the id, then created it, with awaits in between. Now the database
decides with one insert that does nothing when the row exists: one request wins, the others
get 409 — also when the requests go to two servers sharing the file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from glove_core import SqliteStore
from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import KEY, running, simple_factory


async def test_ten_concurrent_creations_of_one_id_give_one_201(tmp_path: Path) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        answers = await asyncio.gather(
            *(client.post("/sessions", json={"id": "same"}) for _ in range(10))
        )
        assert sorted(a.status_code for a in answers) == [201] + [409] * 9
        conflict = next(a for a in answers if a.status_code == 409)
        assert conflict.json() == {"error": "session 'same' already exists"}


async def test_two_servers_on_one_file_agree_on_the_winner(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    first = HeadlessServer(db, KEY, simple_factory())
    second = HeadlessServer(db, KEY, simple_factory())
    async with running(first) as a, running(second) as b:
        for round_ in range(5):
            answers = await asyncio.gather(
                *(c.post("/sessions", json={"id": f"id{round_}"}) for c in (a, b, a, b))
            )
            assert sorted(x.status_code for x in answers) == [201, 409, 409, 409]
    sessions = await SqliteStore.list_sessions(db)
    assert sorted(s.session_id for s in sessions) == [f"id{i}" for i in range(5)]
