"""PostgresEventQueue across instances: an event queued through another instance's queue joins
the turn running here at its next tool step (LISTEN/NOTIFY), and is delivered once."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

import asyncio
from datetime import UTC, datetime

from glove_core import EventsConfig, Glove, ScriptedModel, ToolCall, tool
from glove_core.event_queue import NotifyingEventQueue, OutsideEvent
from glove_core.event_queue_postgres import EVENTS_CHANNEL, PostgresEventQueue
from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore


async def test_an_event_queued_on_another_instance_joins_the_running_turn(
    postgres_url: str,
) -> None:
    async with (
        PostgresDatabase(postgres_url) as here,
        PostgresDatabase(postgres_url) as elsewhere,
    ):
        queue = await PostgresEventQueue(here, "c").open()
        assert isinstance(queue, NotifyingEventQueue)
        other = await PostgresEventQueue(elsewhere, "c").open()
        heard = asyncio.Event()

        @tool
        async def deploy() -> str:
            """Deploy; meanwhile another instance receives a webhook for this conversation."""
            event = OutsideEvent(
                id="hook-1",
                source="ci",
                kind="build",
                content="build 7 passed",
                received_at=datetime.now(UTC),
            )
            assert await other.add(event)
            await asyncio.wait_for(heard.wait(), 30)  # the notification reached this instance
            return "deployed"

        model = ScriptedModel([[ToolCall(id="t1", name="deploy", input={})], "done"])
        store = PostgresStore(here, "c")
        glove = Glove(model=model, system_prompt="s", store=store, events=EventsConfig(queue=queue))
        glove.fold(deploy).build()
        async with here.subscribe(EVENTS_CHANNEL, "c", heard.set):
            result = await glove.process_request("ship it")
        assert result.text == "done"
        # The second model call already saw the event: it joined the turn at the tool step.
        seen = [m for m in model.requests[1].messages if m.framework_context == "event"]
        assert len(seen) == 1 and "build 7 passed" in seen[0].text
        assert await queue.pending() == [] and await other.pending() == []
        saved = [m for m in await store.get_messages() if m.framework_context == "event"]
        assert len(saved) == 1
        await queue.aclose()
        await other.aclose()
        await glove.aclose()
