"""An outside implementation joins our traces: FastMCP (pinned, in its own venv made by
``tests/interop/fastmcp_otel/install.sh``) exports its spans over OTLP/HTTP to a receiver in
this test while a Glove calls its tool through a bridged tool, over Streamable HTTP and over
stdio. FastMCP's server span must be in our trace, under our MCP client span.

Without FastMCP's venv (or without the ``otel`` extra, whose protobuf definitions decode what
FastMCP exports) these tests skip, saying why, unless ``GLOVE_REQUIRE_INTEROP=1``.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is in the test extra")

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from glove_core import Glove, MemoryStore, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from tests._otel import parent_of, sid, telemetry

HERE = Path(__file__).parent / "fastmcp_otel"
SERVER = HERE / "server.py"


def _venv() -> Path:
    """Where install.sh puts FastMCP's venv (outside the checkout)."""
    venvs = os.environ.get("GLOVE_INTEROP_VENVS")
    if venvs:
        return Path(venvs) / "fastmcp-otel"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "glove" / "interop" / "fastmcp-otel"


PYTHON = _venv() / "bin" / "python"

try:
    from tests._otlp import Receiver, otlp_receiver, received_spans, wait_until_received

    _why = "" if PYTHON.exists() else f"FastMCP's venv is missing: run {HERE / 'install.sh'}"
except ImportError as exc:
    _why = f"the otel extra is not installed ({exc.name}): pip install -e '.[otel]'"


@pytest.fixture(autouse=True)
def _installed() -> None:
    if not _why:
        return
    if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
        pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {_why}", pytrace=False)
    pytest.skip(_why)


@asynccontextmanager
async def fastmcp_over_http(endpoint: str) -> AsyncIterator[str]:
    """FastMCP serving Streamable HTTP on a free loopback port; yields its MCP URL."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    env.pop("PYTHONPATH", None)  # FastMCP's venv only
    process = await asyncio.create_subprocess_exec(
        str(PYTHON), str(SERVER), "http", str(port), env=env, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        async with asyncio.timeout(60):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    if process.returncode is not None:
                        raise RuntimeError("FastMCP stopped before it listened") from None
                    await asyncio.sleep(0.1)
                    continue
                writer.close()
                await writer.wait_closed()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        await process.wait()


async def _call_forecast(entry: McpCatalogueEntry) -> list[ReadableSpan]:
    model = ScriptedModel(
        [[ToolCall(id="c1", name="outside__forecast", input={"city": "Lyon"})], "sunny"]
    )
    glove = Glove(model=model, system_prompt="s", store=MemoryStore("conv"), server_mode=True)
    adapter = MemoryMcpAdapter("conv", active=["outside"])
    async with await mount_mcp(glove, adapter=adapter, entries=[entry]):
        glove.build()
        with telemetry().collect() as t:
            result = await glove.process_request("weather in Lyon?")
    assert result.text == "sunny"
    [outcome] = [r.result for m in result.messages for r in (m.tool_results or [])]
    assert outcome.status == "success" and "sunny in Lyon" in str(outcome.data)
    return t.spans()


def _served(received: type[Receiver]) -> Callable[[], bool]:
    def found() -> bool:
        return any(
            s.kind == s.SPAN_KIND_SERVER and "forecast" in s.name
            for s in received_spans(received.traces)
        )

    return found


def _check_joined(ours: list[ReadableSpan], theirs: list[Any]) -> None:
    client = next(s for s in ours if s.name == "tools/call forecast" and s.kind is SpanKind.CLIENT)
    send = next(s for s in ours if s.name == "MCP send tools/call forecast")
    assert parent_of(send, ours) is client
    assert parent_of(client, ours) is next(
        s for s in ours if s.name == "execute_tool outside__forecast"
    )
    assert client.context is not None
    served = [
        s
        for s in theirs
        if s.kind == s.SPAN_KIND_SERVER and int.from_bytes(s.trace_id) == client.context.trace_id
    ]
    assert served, [s.name for s in theirs]
    # FastMCP's server span's parent is the span whose context went out in _meta: the mcp
    # SDK's send span, our client span's child.
    assert {int.from_bytes(s.parent_span_id) for s in served} == {sid(send)}
    assert any("forecast" in s.name for s in served), [s.name for s in served]


async def test_fastmcp_over_http_joins_the_trace_of_a_bridged_call() -> None:
    with otlp_receiver() as (endpoint, received):
        async with fastmcp_over_http(endpoint) as url:
            entry = McpCatalogueEntry(
                id="outside", name="Outside", url=url, description="FastMCP weather."
            )
            ours = await _call_forecast(entry)
            await wait_until_received(received, _served(received))
    _check_joined(ours, received_spans(received.traces))


async def test_fastmcp_over_stdio_joins_the_trace_of_a_bridged_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with otlp_receiver() as (endpoint, received):
        # The catalogue entry's env reaches the command (on top of ours).
        entry = McpCatalogueEntry(
            id="outside",
            name="Outside",
            command=[str(PYTHON), str(SERVER), "stdio"],
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
            description="FastMCP weather over stdio.",
        )
        ours = await _call_forecast(entry)
        await wait_until_received(received, _served(received))
    _check_joined(ours, received_spans(received.traces))
