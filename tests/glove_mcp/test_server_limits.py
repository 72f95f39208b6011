"""The headless server's input bounds and room: ids matched whole, numeric headers and query
parameters bounded (400, never 500), and a burst of follow streams served within
``ulimit -n``."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx2
import pytest

from glove_mcp.server import HeadlessServer
from tests.glove_mcp.server._harness import AUTH, KEY, running, serve_process, simple_factory


@pytest.mark.parametrize("bad", ["ok-id\n", ".", "..", "...", "a" * 129, "", "a b", "é"])
async def test_an_id_must_match_whole_and_not_be_only_dots(tmp_path: Path, bad: str) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    async with running(server) as client:
        created = await client.post("/sessions", json={"id": bad})
        assert created.status_code == 400, created.text
        assert "not only dots" in created.json()["error"]
        assert (await client.get("/sessions")).json()["sessions"] == []
        assert (await client.post("/sessions", json={"id": "ok-id"})).status_code == 201
        assert (await client.post("/sessions", json={"id": ".a."})).status_code == 201
        # The newline-suffixed twin of a real id is not that id.
        assert (await client.get("/sessions/ok-id%0A")).status_code == 400


async def test_numbers_in_headers_and_queries_are_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = HeadlessServer(str(tmp_path / "s.db"), KEY, simple_factory())
    huge = "9" * 5000
    async with running(server) as client:
        await client.post("/sessions", json={"id": "s1"})
        with caplog.at_level(logging.INFO):
            for params, headers, name in [
                ({}, {"Last-Event-ID": huge}, "Last-Event-ID"),
                ({}, {"Last-Event-ID": "9" * 19}, "Last-Event-ID"),
                ({"after": huge}, {}, "after"),
                ({"after": "-" + huge}, {}, "after"),
            ]:
                reply = await client.get("/sessions/s1/events", params=params, headers=headers)
                assert reply.status_code == 400, reply.text
                assert f"{name} must be" in reply.json()["error"]
                assert len(reply.text) < 300
            for params in [{"limit": huge}, {"limit": "-" + huge}, {"limit": "1e3"}]:
                reply = await client.get("/sessions", params=params)
                assert reply.status_code == 400 and "limit must be" in reply.json()["error"]
        assert "Traceback" not in caplog.text and "Exceeds the limit" not in caplog.text
        # A cursor past the end is still told apart from a malformed one.
        past = await client.get("/sessions/s1/events", headers={"Last-Event-ID": "9" * 18})
        assert past.status_code == 400 and "past the end" in past.json()["error"]


async def test_a_burst_of_follow_streams_is_served_under_a_low_file_limit(
    tmp_path: Path,
) -> None:
    # ulimit -n 256 in the server's process: 70 streams on 70 sessions opened at once. Each
    # open session holds a few descriptors; opens beyond what fits wait for room.
    async with serve_process(tmp_path, nofile=256) as served:
        async with httpx2.AsyncClient(base_url=served.url, headers=AUTH, timeout=60) as client:
            for index in range(70):
                created = await client.post("/sessions", json={"id": f"s{index}"})
                assert created.status_code == 201, created.text
        limits = httpx2.Limits(max_connections=200, max_keepalive_connections=0)
        async with httpx2.AsyncClient(
            base_url=served.url, headers=AUTH, timeout=60, limits=limits
        ) as client:
            answered: list[int] = []
            everyone = asyncio.Event()

            async def one(index: int) -> tuple[int, str]:
                # Every stream stays open until all 70 have their answer: held at once.
                async with client.stream("GET", f"/sessions/s{index}/events") as response:
                    if response.status_code != 200:
                        result = response.status_code, (await response.aread()).decode()
                    else:
                        result = 0, "ended before ready"
                        async for line in response.aiter_lines():
                            if line.startswith("event: ready"):
                                result = 200, ""
                                break
                    answered.append(result[0])
                    if len(answered) == 70:
                        everyone.set()
                    await asyncio.wait_for(everyone.wait(), 60)
                    return result

            results = await asyncio.gather(*(one(i) for i in range(70)))
        refused = [r for r in results if r[0] != 200]
        assert refused == [], refused[:3]
        assert "Traceback" not in served.log.read_text()
