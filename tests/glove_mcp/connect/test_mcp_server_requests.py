"""What a server tells a mounted agent: progress, log messages, list changes and instructions,
through a Glove driven by ScriptedModel, on both protocol eras, against a server built with the
mcp SDK (tests/glove_mcp/connect/probe_server.py). What it asks (sampling, elicitation, roots) is
tested against server-everything in tests/interop and in test_sampling / test_elicitation."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from glove_core import Glove, ScriptedModel, ToolCall
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.connect.mcp_server_requests import LogGate, ProgressGate, roots_from
from glove_mcp.mount.options import check_allow_sampling, may_sample
from glove_mcp.subscribers import McpListChanged, McpLog, McpProgress
from glove_mcp.testing import serve
from tests.glove_mcp.connect.probe_server import INSTRUCTIONS, build_probe_server

# These tests read results as the server sent them, without the untrusted-content
# envelope that mount_mcp puts them in by default (tests/glove_mcp/test_untrusted_marks.py).
mount_mcp = functools.partial(mount_mcp, mark_untrusted=False)

PROTOCOLS = ["auto", "legacy"]


@pytest.fixture
async def probe_url() -> AsyncIterator[str]:
    async with serve(build_probe_server()) as url:
        yield url


def _entry(url: str, protocol: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(
        id="probe", name="Probe", description="talks back", url=url, protocol=protocol
    )


def _calls(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    script: list[Any] = [
        [ToolCall(id=f"c{i}", name=name, input=args)] for i, (name, args) in enumerate(calls)
    ]
    return [*script, "done"]


def _results(model: ScriptedModel) -> list[Any]:
    """The tool results the model saw, in order."""
    last = model.requests[-1].messages
    return [r for m in last for r in (m.tool_results or [])]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_progress_reaches_subscribers_with_the_call_id(probe_url: str, protocol: str) -> None:
    model = ScriptedModel(_calls(("probe__steps", {"n": 4, "pause": 0.15})))
    glove = Glove(model, "test", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("c", active=["probe"]), [_entry(probe_url, protocol)]
    ):
        glove.build()
        await glove.process_request("go")
    progress = recorder.of(McpProgress)
    assert [(p.progress, p.total) for p in progress] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert {(p.server, p.tool, p.call_id) for p in progress} == {("probe", "steps", "c0")}
    assert progress[-1].message == "step 4 of 4"
    assert _results(model)[0].result.data == {"result": "4 steps done"}


async def test_a_progress_flood_is_thinned_and_keeps_the_last_report(probe_url: str) -> None:
    model = ScriptedModel(_calls(("probe__steps", {"n": 300, "pause": 0})))
    glove = Glove(model, "test", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("c", active=["probe"]), [_entry(probe_url, "auto")]
    ):
        glove.build()
        await glove.process_request("go")
    progress = recorder.of(McpProgress)
    assert 1 <= len(progress) < 30
    assert progress[-1].progress == 300
    assert _results(model)[0].result.status == "success"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_log_messages_reach_the_server_logger_and_subscribers(
    probe_url: str, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(_calls(("probe__chatter", {"n": 3})))
    glove = Glove(model, "test", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    caplog.set_level(logging.INFO, logger="glove_mcp.mcp_server.probe")
    async with await mount_mcp(
        glove,
        MemoryMcpAdapter("c", active=["probe"]),
        [_entry(probe_url, protocol)],
        log_level="info",
    ):
        glove.build()
        await glove.process_request("go")
        logs = await recorder.wait_for(McpLog, count=3)
    assert [(e.server, e.level, e.data) for e in logs] == [
        ("probe", "info", f"message {i}") for i in range(3)
    ]
    said = [r.getMessage() for r in caplog.records if r.name == "glove_mcp.mcp_server.probe"]
    assert said == [f"message {i}" for i in range(3)]


async def test_a_log_flood_is_cut_and_the_drop_is_said(
    probe_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(_calls(("probe__chatter", {"n": 400})))
    glove = Glove(model, "test", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    async with await mount_mcp(
        glove,
        MemoryMcpAdapter("c", active=["probe"]),
        [_entry(probe_url, "auto")],
        log_level="info",
    ):
        glove.build()
        await glove.process_request("go")
    assert len(recorder.of(McpLog)) <= 2 * 50  # a window or two of LOG_RATE
    assert _results(model)[0].result.data == {"result": "400 messages sent"}


# Stateless only: over the handshake the SDK's server declares no listChanged, so the client
# opens no standalone stream for it (server-everything, which declares it, covers that era).
@pytest.mark.parametrize("protocol", ["auto"])
async def test_tool_list_changes_are_offered_from_the_next_model_call(
    probe_url: str, protocol: str
) -> None:
    recorder = RecordingSubscriber()

    async def after_grow(request: Any) -> list[ToolCall]:
        await recorder.wait_for(McpListChanged)
        return [ToolCall(id="c1", name="probe__extra", input={"word": "hi"})]

    async def after_shrink(request: Any) -> list[ToolCall]:
        await recorder.wait_for(McpListChanged, count=2)
        return [ToolCall(id="c3", name="probe__extra", input={"word": "again"})]

    model = ScriptedModel(
        [
            [ToolCall(id="c0", name="probe__grow", input={})],
            after_grow,
            [ToolCall(id="c2", name="probe__shrink", input={})],
            after_shrink,
            "done",
        ]
    )
    glove = Glove(model, "test", server_mode=True)
    glove.add_subscriber(recorder)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("c", active=["probe"]), [_entry(probe_url, protocol)]
    ):
        glove.build()
        await glove.process_request("go")
    names = [[t.name for t in r.tools] for r in model.requests]
    assert "probe__extra" not in names[0]
    assert "probe__extra" in names[2]
    assert "probe__extra" not in names[4]
    results = _results(model)
    assert results[1].result.data == {"result": "extra: hi"}
    assert results[3].result.status == "error"
    assert "tool_unavailable" in (results[3].result.message or "")
    grown, shrunk = recorder.of(McpListChanged)[:2]
    assert (grown.server, grown.what, grown.added) == ("probe", "tools", ("probe__extra",))
    assert shrunk.removed == ("probe__extra",)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_server_instructions_reach_the_model_once_as_history_context(
    probe_url: str, protocol: str
) -> None:
    model = ScriptedModel(["one", "two"])
    glove = Glove(model, "test", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("c", active=["probe"]), [_entry(probe_url, protocol)]
    ):
        glove.build()
        await glove.process_request("first")
        await glove.process_request("second")
    first, second = model.requests
    assert first.system == second.system == "test"

    def mentions(request: Any) -> list[str]:
        return [m.text for m in request.messages if INSTRUCTIONS in (m.text or "")]

    # Saved once (it did not change), so the second request's prefix is the first's.
    assert len(mentions(first)) == 1
    assert mentions(second) == mentions(first)


def test_progress_gate_drops_backwards_and_too_frequent_reports() -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    now = [0.0]

    async def sink(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    gate = ProgressGate(sink, interval=1.0, clock=lambda: now[0])

    async def run() -> None:
        await gate(1, 10, "a")
        await gate(2, 10, "b")  # too soon
        now[0] = 2.0
        await gate(1, 10, "c")  # backwards
        await gate(3, 10, "x" * 600)
        await gate(10, 10, "done")  # the last always passes

    import asyncio

    asyncio.run(run())
    assert [s[0] for s in seen] == [1, 3, 10]
    assert seen[1][2] is not None and len(seen[1][2]) == 501
    assert gate.dropped == 2


def test_log_gate_counts_what_it_drops() -> None:
    now = [0.0]
    gate = LogGate(rate=2, clock=lambda: now[0])
    assert [gate.admit() for _ in range(4)] == [True, True, False, False]
    assert gate.dropped == 2
    now[0] = 1.5
    assert gate.admit()


async def test_roots_are_file_uris_named_after_their_last_part(tmp_path: Any) -> None:
    roots = await roots_from([tmp_path, "file:///srv/data/"])
    assert str(roots[0].uri) == tmp_path.as_uri() and roots[0].name == tmp_path.name
    assert [r.name for r in roots[1:]] == ["data"]
    with pytest.raises(ValueError, match=r"roots are directories or file:// URIs.*https"):
        await roots_from(["https://example.com/repo"])

    async def later() -> list[str]:
        return ["file:///x"]

    assert [str(r.uri) for r in await roots_from(later)] == ["file:///x"]


def test_allow_sampling_refuses_what_cannot_be_meant() -> None:
    entries = [McpCatalogueEntry(id="probe", name="P", description="d", url="http://x/mcp")]
    with pytest.raises(TypeError, match=r"allow_sampling=\['probe'\]"):
        check_allow_sampling("probe", entries)
    with pytest.raises(ValueError, match="not in the catalogue: nope"):
        check_allow_sampling(["nope"], entries)
    check_allow_sampling(["probe"], entries)
    check_allow_sampling(True, entries)


def test_an_entry_decides_over_the_mount_whether_it_may_sample() -> None:
    plain = McpCatalogueEntry(id="a", name="A", description="d", url="http://x/mcp")
    refused = plain.model_copy(update={"allow_sampling": False})
    allowed = plain.model_copy(update={"allow_sampling": True})
    assert may_sample(plain, True) and may_sample(plain, ["a"]) and not may_sample(plain, False)
    assert not may_sample(refused, True)
    assert may_sample(allowed, False)
