"""``glove-mcp serve --database URL --durable`` on several instances: turns survive SIGKILL.

Three durable instances share one PostgreSQL database; a bounded client drives sessions of 5
requests each through them round-robin. Every request makes the model call two tools of a
counting MCP server — ``search_pages`` (read-only) and ``file_issue`` (no hints: not
idempotent), which counts its calls by the idempotency key each call carries in ``_meta`` —
and then answer "done". Then three turns are cut by SIGKILL at different points: one while
``file_issue`` is held at the server (mid-tool), one on an instance whose model calls take 30
seconds (mid-model call), one the moment ``file_issue`` returns (at the step boundary: the
result recorded or not yet). A follower on a surviving instance watches each victim.

Checked: every interrupted turn is finished by a surviving instance with its final answer;
no ``file_issue`` call ran twice (the count per key); every history is valid (each call
answered once, requests once and in order, no message twice); the call in flight at the
mid-tool kill is answered "interrupted; not run again"; each follower saw every message once.

The everyday run drives ``DURABLE_SESSIONS`` sessions; ``-m scale`` runs 100.
"""

from __future__ import annotations

# ruff: noqa: E402 -- without the extras this module skips before its imports fail
import importlib.util
import os

import pytest

from tests._postgres import require_postgres_driver

require_postgres_driver()
if importlib.util.find_spec("dbos") is None:
    if os.environ.get("GLOVE_REQUIRE_POSTGRES") == "1":
        pytest.fail("dbos is required here (GLOVE_REQUIRE_POSTGRES=1): pip install -e '.[durable]'")
    pytest.skip(
        "needs dbos for durable turns: pip install -e '.[durable]'", allow_module_level=True
    )

import asyncio
import contextlib
import signal
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx2
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

from glove_core.postgres import PostgresDatabase
from glove_core.steps import INTERRUPTED_NOT_RUN
from glove_core.stores.postgres import PostgresStore
from glove_core.types import Message
from glove_mcp.adapter_postgres import PostgresMcpAdapter
from glove_mcp.mount.bridge import IDEMPOTENCY_KEY_META
from glove_mcp.testing import serve
from tests.glove_mcp.server._follow import Item, follow
from tests.glove_mcp.server._harness import AUTH, ServeProcess, serve_process, sse_events
from tests.glove_mcp.server.test_multi_instance import assert_valid_history

DURABLE_SESSIONS = int(os.environ.get("GLOVE_TEST_DURABLE_SESSIONS", "6"))
REQUESTS = 5
CONCURRENCY = 12
TIMEOUT = 120.0
CLIENT_LIMITS = httpx2.Limits(keepalive_expiry=1.0)

_CALLS = {
    "tool_calls": [
        {"name": "counting__search_pages", "input": {"query": "roadmap"}},
        {"name": "counting__file_issue", "input": {"title": "roadmap"}},
    ]
}
REPLIES = [_CALLS, "done"] * 10
CATALOGUE = (
    '[[servers]]\nid = "counting"\nname = "Counting"\ndescription = "Counts calls."\nurl = "{}"\n'
)


class CountingServer:
    """An MCP server that counts ``file_issue`` calls by idempotency key, and holds the next
    one when asked."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.keyless = 0
        self.hold_next = False
        self.arrived = asyncio.Event()
        self.returned = asyncio.Event()
        self.release = asyncio.Event()
        self.server = MCPServer("counting", log_level="WARNING")

        @self.server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def search_pages(query: str) -> str:
            """Search pages."""
            return f"pages about {query}"

        @self.server.tool()
        async def file_issue(title: str, ctx: Context) -> str:
            """File an issue (not idempotent)."""
            meta = ctx.request_context.meta or {}
            key = meta.get(IDEMPOTENCY_KEY_META)
            if not isinstance(key, str):
                self.keyless += 1
                key = f"keyless-{self.keyless}"
            self.calls[key] += 1
            if self.hold_next:
                self.hold_next = False
                self.arrived.set()
                await self.release.wait()
            self.returned.set()
            return f"filed {title}"


async def message(http: httpx2.AsyncClient, base: str, sid: str, text: str) -> None:
    response = await http.post(f"{base}/sessions/{sid}/messages", headers=AUTH, json={"text": text})
    assert response.status_code == 200, response.text
    events = sse_events(response.text)
    assert events[-1][0] == "final", events


async def saved(store: PostgresStore, done: Any) -> list[Message]:
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        messages = await store.get_messages()
        if done(messages):
            return messages
        assert asyncio.get_running_loop().time() < deadline, (store.identifier, messages)
        await asyncio.sleep(0.02)


def finished(requests: int) -> Any:
    def check(messages: list[Message]) -> bool:
        typed = [
            m
            for m in messages
            if m.sender == "user" and not m.tool_results and m.framework_context is None
        ]
        return (
            len(typed) == requests
            and messages[-1].sender == "agent"
            and messages[-1].text == "done"
            and messages[-1].tool_calls is None
        )

    return check


async def kill(instance: ServeProcess) -> None:
    instance.process.send_signal(signal.SIGKILL)
    await asyncio.wait_for(instance.process.wait(), TIMEOUT)


async def run_durable(tmp_path: Path, postgres_url: str, sessions: int) -> None:
    counting = CountingServer()
    async with (
        serve(counting.server) as counting_url,
        AsyncExitStack() as stack,
        # Idle connections dropped well before the servers' 5 s keep-alive ends: a request
        # sent on a connection the server is closing fails with ReadError (HTTP's own race).
        httpx2.AsyncClient(timeout=TIMEOUT, limits=CLIENT_LIMITS) as http,
    ):
        catalogue = CATALOGUE.format(counting_url)
        script = {"from_history": True, "replies": REPLIES}

        async def instance(name: str, **extra: Any) -> ServeProcess:
            started: ServeProcess = await stack.enter_async_context(
                serve_process(
                    tmp_path,
                    "--durable",
                    database=postgres_url,
                    script={**script, **extra},
                    catalogue_text=catalogue,
                    name=name,
                )
            )
            return started

        # One first (it creates DBOS's tables), then the others together.
        first = await instance("a")
        others = await asyncio.gather(instance("b"), instance("c"))
        instances = [first, *others]
        bases = [i.url for i in instances]
        db = await stack.enter_async_context(PostgresDatabase(postgres_url))
        victims = ["mid-tool", "mid-model", "at-boundary"]
        sids = [f"s{i:03d}" for i in range(sessions)]
        for sid in [*sids, *victims]:
            await PostgresMcpAdapter(db, sid).activate("counting")
        limit = asyncio.Semaphore(CONCURRENCY)

        async def run_session(i: int, sid: str) -> None:
            async with limit:
                created = await http.post(
                    f"{bases[i % 3]}/sessions", headers=AUTH, json={"id": sid}
                )
            assert created.status_code == 201, created.text
            for k in range(REQUESTS):
                async with limit:
                    await message(http, bases[(i + k) % 3], sid, f"{sid} req {k}")

        await asyncio.gather(*(run_session(i, sid) for i, sid in enumerate(sids)))

        # -- three turns cut by SIGKILL --------------------------------------------------
        survivor = instances[2]
        for k, sid in enumerate(victims):
            created = await http.post(f"{survivor.url}/sessions", headers=AUTH, json={"id": sid})
            assert created.status_code == 201, created.text
            await message(http, bases[k % 2], sid, f"{sid} req 0")
        followers = {
            sid: await stack.enter_async_context(
                follow(
                    await stack.enter_async_context(
                        httpx2.AsyncClient(base_url=survivor.url, headers=AUTH, timeout=TIMEOUT)
                    ),
                    sid,
                )
            )
            for sid in victims
        }

        def doomed(base: str, sid: str) -> asyncio.Task[None]:
            async def send() -> None:
                with contextlib.suppress(httpx2.HTTPError, AssertionError, KeyError, ValueError):
                    await message(http, base, sid, f"{sid} req 1")

            return asyncio.create_task(send())

        # 1. mid-tool: file_issue held at the server, its instance killed.
        counting.hold_next = True
        cut = doomed(instances[0].url, "mid-tool")
        await asyncio.wait_for(counting.arrived.wait(), TIMEOUT)
        # An outside event posted to a survivor meanwhile wakes a turn that waits for the
        # conversation: once the dead instance's lock is gone, it first finishes the cut turn.
        event = {"id": "mid-tool-e", "source": "ci", "kind": "build", "content": "event for it"}
        posted = await http.post(
            f"{survivor.url}/sessions/mid-tool/events",
            headers=AUTH,
            json={**event, "when_idle": "wake"},
        )
        assert posted.status_code == 200, posted.text
        assert posted.json()["disposition"] in ("woke", "queued")
        await kill(instances[0])
        counting.release.set()
        await cut
        replacement = await instance("a2")
        # Finished by a survivor before the next cut, so no other turn calls file_issue then.
        events = await saved(
            PostgresStore(db, "mid-tool"),
            lambda ms: finished(2)(ms) and any(m.framework_context == "event" for m in ms),
        )
        delivered = [m for m in events if m.framework_context == "event"]
        assert len(delivered) == 1 and "event for it" in delivered[0].text, events

        # 2. mid-model call: an instance whose model calls take 30 s; killed once the request
        # is saved (its start step done; the model call under way).
        slow = await instance("slow", latency=30.0)
        store = PostgresStore(db, "mid-model")
        cut = doomed(slow.url, "mid-model")
        await saved(store, lambda ms: any(m.text == "mid-model req 1" for m in ms))
        await asyncio.sleep(0.5)
        await kill(slow)
        await cut
        await saved(store, finished(2))

        # 3. at the step boundary: killed the moment file_issue returns.
        counting.returned.clear()
        cut = doomed(instances[1].url, "at-boundary")
        await asyncio.wait_for(counting.returned.wait(), TIMEOUT)
        await kill(instances[1])
        await cut

        # -- every interrupted turn finished by a survivor ---------------------------------
        for sid in victims:
            messages = await saved(PostgresStore(db, sid), finished(2))
            assert_valid_history(sid, messages, [f"{sid} req {k}" for k in range(2)])
        outcomes = {
            sid: [
                (r.result.status, r.result.message)
                for m in await PostgresStore(db, sid).get_messages()
                for r in m.tool_results or []
            ]
            for sid in victims
        }
        assert ("aborted", INTERRUPTED_NOT_RUN) in outcomes["mid-tool"], outcomes
        assert all(status == "success" for status, _ in outcomes["mid-model"]), outcomes

        for sid in sids:
            messages = await PostgresStore(db, sid).get_messages()
            assert finished(REQUESTS)(messages), (sid, messages)
            assert_valid_history(sid, messages, [f"{sid} req {k}" for k in range(REQUESTS)])

        # No non-idempotent call ran twice: one run per idempotency key, and every call had one.
        assert counting.keyless == 0
        twice = {key: n for key, n in counting.calls.items() if n > 1}
        assert not twice, twice
        assert sum(counting.calls.values()) >= sessions * REQUESTS

        # Each follower saw every message of its victim once, in order.
        for sid, stream in followers.items():
            total = len(await PostgresStore(db, sid).get_messages())
            seen: list[Item] = [i for i in stream.replayed if i.name == "message"]
            last = str(total)

            def is_last(item: Item, last: str = last) -> bool:
                return item.name == "message" and item.id == last

            if len(seen) < total:
                more = await stream.until(is_last, limit=TIMEOUT)
                seen += [i for i in more if i.name == "message"]
            positions = [int(i.id or 0) for i in seen]
            assert positions == list(range(positions[0], total + 1)), (sid, positions)
        del replacement


async def test_durable_instances_finish_turns_cut_by_sigkill(
    tmp_path: Path, postgres_url: str
) -> None:
    await run_durable(tmp_path, postgres_url, DURABLE_SESSIONS)


@pytest.mark.scale
async def test_durable_instances_at_full_size(tmp_path: Path, postgres_url: str) -> None:
    await run_durable(tmp_path, postgres_url, 100)
