"""Interop: what the reference server ``@modelcontextprotocol/server-everything`` asks and tells a
mounted agent that declares everything — sampling, elicitation, roots — over stdio and
Streamable HTTP, through a ``Glove`` driven by ``ScriptedModel`` in interactive mode.

The test plays the person: it answers the display manager's slots (permission requests, and
``mcp_elicitation`` forms) as an application's UI would. The sampling request is answered by
the configured sampling model (a second ``ScriptedModel``), roots come from the mount, progress
and log messages arrive as subscriber events, and the tool that requires a task runs as one.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from glove_core import DisplayManager, Glove, ScriptedModel, ToolCall, ToolResultData
from glove_core.display import Slot
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, McpMount, MemoryMcpAdapter, mount_mcp
from glove_mcp.subscribers import McpLog, McpProgress, McpSampling
from tests.interop.test_server_everything import SERVER, entry, http_server  # noqa: F401

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).resolve().parent
SAMPLED = "A haiku from the sampling model."
GATED = (
    "get-roots-list",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
    "simulate-research-query",
)


class Person:
    """Answers the slots as a UI would: allows every tool, fills forms with a name."""

    def __init__(self, display: DisplayManager) -> None:
        self.display = display
        self.forms: list[dict[str, Any]] = []
        self._answered: set[str] = set()
        display.subscribe(self._on_change)

    def _on_change(self, slots: list[Slot]) -> None:
        for slot in slots:
            if slot.kind != "wait" or slot.id in self._answered:
                continue
            self._answered.add(slot.id)
            asyncio.get_running_loop().call_soon(self._answer, slot)

    def _answer(self, slot: Slot) -> None:
        if slot.renderer == "permission_request":
            self.display.resolve(slot.id, True)
        elif slot.renderer == "mcp_elicitation":
            self.forms.append(slot.input)
            if slot.input["mode"] == "url":
                self.display.resolve(slot.id, {"action": "accept"})
            else:
                self.display.resolve(slot.id, {"action": "accept", "content": {"name": "Ada"}})


@dataclass
class Agent:
    glove: Glove
    model: ScriptedModel
    sampler: ScriptedModel
    mount: McpMount
    person: Person
    recorder: RecordingSubscriber
    ids: Any = None

    async def call(self, name: str, args: dict[str, Any]) -> ToolResultData:
        call_id = f"c{next(self.ids)}"
        self.model.extend([[ToolCall(id=call_id, name=f"{SERVER}__{name}", input=args)], "done"])
        await self.glove.process_request(f"call {name}")
        [found] = [
            r
            for m in self.model.requests[-1].messages
            for r in (m.tool_results or [])
            if r.call_id == call_id
        ]
        return found.result


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(entry: McpCatalogueEntry) -> AsyncIterator[Agent]:  # noqa: F811
    model = ScriptedModel([])
    sampler = ScriptedModel([SAMPLED])
    display = DisplayManager()
    glove = Glove(model, "Interop test.", display_manager=display)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    person = Person(display)
    mount = await mount_mcp(
        glove,
        MemoryMcpAdapter("interop", active=[SERVER]),
        [entry],
        sampling_model=sampler,
        allow_sampling=True,
        roots=[ROOT],
        log_level="debug",
    )
    try:
        glove.build()
        assert mount.loaded == [SERVER], [f.error for f in recorder.of("mcp_server_failed")]
        yield Agent(glove, model, sampler, mount, person, recorder, itertools.count())
    finally:
        await mount.aclose()


def _text(result: ToolResultData) -> str:
    assert result.status == "success", result.message
    assert isinstance(result.data, str), result.data
    return result.data


async def test_declaring_everything_lists_every_tool(agent: Agent) -> None:
    connection = agent.mount.connection(SERVER)
    assert connection is not None
    listed = {t.name for t in await connection.list_tools()}
    assert len(listed) >= 17
    assert set(GATED) <= listed
    offered = {t.name for t in agent.glove.tools}
    assert {f"{SERVER}__{name}" for name in GATED} <= offered


async def test_a_sampling_request_is_answered_by_the_sampling_model(agent: Agent) -> None:
    result = await agent.call(
        "trigger-sampling-request", {"prompt": "Write a haiku", "maxTokens": 50}
    )
    assert SAMPLED in _text(result)
    [request] = agent.sampler.requests
    assert "Write a haiku" in (request.messages[-1].text or "")
    assert request.max_tokens == 50
    [used] = agent.recorder.of(McpSampling)
    assert (used.server, used.outcome) == (SERVER, "answered")


async def test_an_elicitation_reaches_the_display_and_the_server_gets_the_answer(
    agent: Agent,
) -> None:
    result = await agent.call("trigger-elicitation-request", {})
    form = agent.person.forms[-1]
    assert form["server"] == SERVER and form["mode"] == "form"
    assert "name" in form["requested_schema"]["properties"]
    text = _text(result)
    assert "User provided the requested information" in text
    assert "Ada" in text


async def test_a_url_elicitation_shows_the_url(agent: Agent) -> None:
    result = await agent.call("trigger-url-elicitation", {"url": "https://example.com/consent"})
    form = agent.person.forms[-1]
    assert (form["mode"], form["url"]) == ("url", "https://example.com/consent")
    assert "completed the URL elicitation" in _text(result)


async def test_the_server_lists_the_mounts_roots(agent: Agent) -> None:
    text = _text(await agent.call("get-roots-list", {}))
    assert ROOT.as_uri() in text


async def test_progress_arrives_during_a_long_running_operation(agent: Agent) -> None:
    result = await agent.call("trigger-long-running-operation", {"duration": 0.6, "steps": 3})
    assert result.status == "success"
    progress = [
        p for p in agent.recorder.of(McpProgress) if p.tool == "trigger-long-running-operation"
    ]
    assert [p.progress for p in progress][-1] == 3
    assert all(p.total == 3 and p.server == SERVER for p in progress)


async def test_log_messages_arrive_after_logging_is_switched_on(agent: Agent) -> None:
    await agent.call("toggle-simulated-logging", {})
    try:
        logs = await agent.recorder.wait_for(McpLog, within=30)
    finally:
        await agent.call("toggle-simulated-logging", {})
    assert logs[0].server == SERVER and logs[0].level


async def test_a_research_query_that_asks_for_clarification_runs_as_a_task(agent: Agent) -> None:
    result = await agent.call("simulate-research-query", {"topic": "python", "ambiguous": True})
    assert "Research Report: python" in _text(result)
    statuses = [
        p.message for p in agent.recorder.of(McpProgress) if p.tool == "simulate-research-query"
    ]
    assert any("task" in (m or "") for m in statuses)
