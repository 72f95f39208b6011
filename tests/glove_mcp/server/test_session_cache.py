"""The headless server's session cache: idle timeout, LRU cap, pins, concurrent opens."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from glove_core import Glove, ScriptedModel, SqliteStore
from glove_mcp.server._session_cache import CachedSession, SessionCache, default_max_sessions


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def opener(
    path: Path, session_id: str, opened: list[str], closed: list[str]
) -> Callable[[], Awaitable[CachedSession]]:
    async def open_session() -> CachedSession:
        opened.append(session_id)
        store = SqliteStore(path, session_id)
        stack = AsyncExitStack()
        stack.callback(closed.append, session_id)
        glove = Glove(model=ScriptedModel(["ok"]), system_prompt="s", store=store).build()
        return CachedSession(session_id, glove, store, stack)

    return open_session


async def test_idle_sessions_close_after_the_timeout_and_pinned_ones_stay(tmp_path: Path) -> None:
    clock, opened, closed = Clock(), list[str](), list[str]()
    cache = SessionCache(10, 60.0, clock=clock)
    db = tmp_path / "s.db"
    for name in ("a", "b"):
        cache.release(await cache.acquire(name, opener(db, name, opened, closed)))
    pinned = await cache.acquire("c", opener(db, "c", opened, closed))
    clock.now = 59.0
    assert await cache.evict_idle() == 0
    clock.now = 61.0
    assert await cache.evict_idle() == 2 and sorted(closed) == ["a", "b"]
    assert "c" in cache and len(cache) == 1  # in use: never closed, however old
    cache.release(pinned)
    clock.now = 200.0
    assert await cache.evict_idle() == 1 and len(cache) == 0
    # A closed session opens again on its next use.
    cache.release(await cache.acquire("a", opener(db, "a", opened, closed)))
    assert opened == ["a", "b", "c", "a"]
    await cache.aclose()
    assert sorted(closed) == ["a", "a", "b", "c"]


async def test_the_cap_closes_the_least_recently_used(tmp_path: Path) -> None:
    opened, closed = list[str](), list[str]()
    cache = SessionCache(2, None)
    db = tmp_path / "s.db"
    for name in ("a", "b", "a", "c"):
        cache.release(await cache.acquire(name, opener(db, name, opened, closed)))
    assert closed == ["b"] and opened == ["a", "b", "c"]
    assert await cache.evict_idle() == 0  # no idle timeout
    await cache.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await cache.acquire("a", opener(db, "a", opened, closed))


async def test_concurrent_acquires_share_one_open(tmp_path: Path) -> None:
    opened, closed = list[str](), list[str]()
    cache = SessionCache(5, None)
    make = opener(tmp_path / "s.db", "x", opened, closed)
    sessions = await asyncio.gather(*(cache.acquire("x", make) for _ in range(10)))
    assert opened == ["x"] and len({id(s) for s in sessions}) == 1 and sessions[0].pins == 10
    await cache.aclose()


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="max_sessions must be 1 or more, got 0"):
        SessionCache(0, None)
    with pytest.raises(ValueError, match="idle_timeout must be more than 0 seconds, got -1"):
        SessionCache(1, -1)
    assert 4 <= default_max_sessions() <= 1000
