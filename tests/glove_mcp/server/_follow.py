"""Reading a headless server's SSE streams item by item, for the follow-stream tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2


@dataclass(frozen=True)
class Item:
    """One SSE event: its name, JSON data and ``id`` (None when it has none)."""

    name: str
    data: dict[str, Any]
    id: str | None


class Stream:
    """An open SSE response, read one event at a time."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self._lines: AsyncIterator[str] = response.aiter_lines()
        self.replayed: list[Item] = []
        """What the stream sent before ``ready``: the saved messages after the cursor, slots."""

    async def next(self) -> Item | None:
        """The next event, or None when the stream ends (comments are skipped)."""
        fields: dict[str, str] = {}
        async for line in self._lines:
            if line == "":
                if "event" in fields:
                    return Item(fields["event"], json.loads(fields["data"]), fields.get("id"))
                fields = {}
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        return None

    async def until(self, done: Callable[[Item], bool], limit: float = 30.0) -> list[Item]:
        """Every event up to and including the first for which ``done`` is true (a guard of
        ``limit`` seconds turns a hang into a failure)."""
        seen: list[Item] = []
        async with asyncio.timeout(limit):
            while True:
                item = await self.next()
                assert item is not None, f"the stream ended; it sent {seen}"
                seen.append(item)
                if done(item):
                    return seen


@asynccontextmanager
async def follow(
    client: httpx2.AsyncClient, session_id: str, **params: Any
) -> AsyncIterator[Stream]:
    """Follow ``session_id``; the stream has sent its saved messages and ``ready`` on entry
    (those are in ``stream.replayed``)."""
    headers = params.pop("headers", None)
    async with client.stream(
        "GET", f"/sessions/{session_id}/events", params=params, headers=headers
    ) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        stream = Stream(response)
        stream.replayed = await stream.until(lambda i: i.name == "ready")
        yield stream
