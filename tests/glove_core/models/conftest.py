"""Fixtures: a fake Messages API on loopback and helpers to drive adapters against it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from glove_core.models.base import ModelRequest
from glove_core.subscribers import EventPayload
from glove_core.testing import FakeAnthropicAPI, serve_fake_anthropic
from glove_core.tools import ToolSpec
from glove_core.types import Message


@dataclass
class Recorder:
    """Collects what an adapter passes to ``notify``."""

    events: list[EventPayload] = field(default_factory=list)
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def __call__(self, event: EventPayload) -> None:
        self.events.append(event)
        async with self._arrived:
            self._arrived.notify_all()

    async def wait_for(self, kind: str) -> None:
        """Return once an event of ``kind`` has been recorded."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: kind in self.names)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.kind == kind]

    @property
    def names(self) -> list[str]:
        return [e.kind for e in self.events]


class RecordingSleep:
    """A RetryPolicy sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropicAPI]:
    async with serve_fake_anthropic() as api:
        yield api


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


SEARCH = ToolSpec(
    "search",
    "Search the notes.",
    {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)


def simple_request(text: str = "hello", system: str = "You are terse.") -> ModelRequest:
    return ModelRequest(system=system, tools=[SEARCH], messages=[Message(sender="user", text=text)])
