"""MCP client spans and metrics, and trace context in ``_meta``, against real servers: the
local test servers over HTTP (in this process, so the SDK's server spans land in the same
exporter) and a stdio server that reports the ``_meta`` it received."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is in the test extra")

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from glove_core import AnthropicModel, Glove, MemoryStore, ScriptedModel, ToolCall, tool
from glove_core.testing import FakeToolUse, serve_fake_anthropic
from glove_core.tracing import Attr
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, connect_mcp, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.errors import McpServerUnavailableError
from glove_mcp.testing import serve
from glove_mcp.types import McpTextContent
from tests._otel import (
    all_attribute_values,
    attrs,
    metric_attribute_values,
    parent_of,
    sid,
    telemetry,
)

META_SERVER = [sys.executable, "-m", "tests.glove_mcp.connect.meta_server"]


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


@pytest.fixture
async def catalogue() -> AsyncIterator[list[McpCatalogueEntry]]:
    async with serve("notes") as notes_url, serve("tracker") as tracker_url:
        yield [
            McpCatalogueEntry(
                id="notes",
                name="Notes",
                url=notes_url,
                description="Search, read, create and update pages of notes.",
            ),
            McpCatalogueEntry(
                id="tracker",
                name="Tracker",
                url=tracker_url,
                tags=["issues", "tickets"],
                description="List, create, update and delete issues in a bug tracker.",
            ),
        ]


def _chain(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    """The names from ``span`` up to its root."""
    names = [span.name]
    parent = parent_of(span, spans)
    while parent is not None:
        names.append(parent.name)
        parent = parent_of(parent, spans)
    return names


async def test_a_bridged_call_is_a_client_span_under_its_tool_span_and_the_server_joins(
    catalogue: list[McpCatalogueEntry],
) -> None:
    model = ScriptedModel(
        [
            [
                ToolCall(id="c-add", name="add", input={"a": 1, "b": 2}),
                ToolCall(id="c-notes", name="notes__search_pages", input={"query": "plans"}),
            ],
            "done",
        ]
    )
    glove = Glove(model=model, system_prompt="s", store=MemoryStore("conv-1"), server_mode=True)
    glove.fold(add)
    adapter = MemoryMcpAdapter("conv-1", active=["notes"])
    async with await mount_mcp(glove, adapter=adapter, entries=catalogue):
        glove.build()
        with telemetry().collect() as t:
            result = await glove.process_request("search my notes")
    assert result.text == "done"
    spans = t.spans()

    agent = t.one("invoke_agent")
    assert attrs(agent)[Attr.CONVERSATION] == "conv-1"
    local, bridged = t.one("execute_tool add"), t.one("execute_tool notes__search_pages")
    assert parent_of(local, spans) is agent and parent_of(bridged, spans) is agent
    assert attrs(bridged)[Attr.TOOL_CALL_ID] == "c-notes"

    client = t.one("tools/call search_pages", SpanKind.CLIENT)
    assert client.kind is SpanKind.CLIENT
    assert parent_of(client, spans) is bridged
    a = attrs(client)
    assert a["mcp.method.name"] == "tools/call"
    assert a[Attr.TOOL_NAME] == "search_pages"
    assert a[Attr.OPERATION] == "execute_tool"
    assert a["glove.mcp.server.id"] == "notes"
    assert a["network.transport"] == "tcp"
    assert a["network.protocol.name"] == "http"
    assert a["server.address"] == "127.0.0.1"
    assert isinstance(a["server.port"], int)
    assert a["mcp.protocol.version"]
    assert Attr.ERROR_TYPE not in a

    # The server (the SDK's, in this process) read the trace context from the request's
    # _meta: its span is in our trace, under our client span (through the SDK's send span).
    served = [s for s in spans if s.kind is SpanKind.SERVER and s.name == "tools/call search_pages"]
    assert len(served) == 1
    assert served[0].context.trace_id == agent.context.trace_id
    chain = _chain(served[0], spans)
    assert chain[:2] == ["tools/call search_pages", "MCP send tools/call search_pages"]
    assert chain[2:] == [
        "tools/call search_pages",
        "execute_tool notes__search_pages",
        "invoke_agent",
    ]

    points = [
        (p_attrs, p)
        for p_attrs, p in t.points("mcp.client.operation.duration")
        if p_attrs.get("glove.mcp.server.id") == "notes"
        and p_attrs.get("mcp.method.name") == "tools/call"
    ]
    assert points and sum(p.count for _, p in points) >= 1


async def test_a_failed_mcp_call_says_why_on_its_span(
    catalogue: list[McpCatalogueEntry],
) -> None:
    async with await connect_mcp("notes", catalogue[0].url) as connection:
        with telemetry().collect() as t:
            result = await connection.call_tool("no_such_tool", {})
    assert result.is_error
    span = t.one("tools/call no_such_tool", SpanKind.CLIENT)
    assert attrs(span)[Attr.ERROR_TYPE] == "tool_error"
    assert span.status.status_code is StatusCode.ERROR
    failed = [
        p_attrs
        for p_attrs, _ in t.points("mcp.client.operation.duration")
        if p_attrs.get(Attr.TOOL_NAME) == "no_such_tool"
    ]
    assert failed and all(p[Attr.ERROR_TYPE] == "tool_error" for p in failed)


async def test_a_server_that_is_not_there_fails_its_handshake_span() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = f"http://user:hunter2@127.0.0.1:{port}/mcp?api_key=sk-in-the-query"
    with telemetry().collect() as t, pytest.raises(McpServerUnavailableError):
        await connect_mcp("gone", url, connect_timeout=5)
    span = t.one("initialize")
    a = attrs(span)
    assert a["error.type"] == "glove_mcp.errors.McpServerUnavailableError"
    assert a["glove.mcp.server.id"] == "gone"
    assert a["server.port"] == port
    text = json.dumps({k: str(v) for k, v in a.items()}) + str(span.status.description)
    assert "hunter2" not in text and "sk-in-the-query" not in text and "user" not in text


async def test_find_capability_activation_is_traced_as_spans_of_its_own(
    catalogue: list[McpCatalogueEntry],
) -> None:
    model = ScriptedModel(
        [
            [ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "list the open issues"})],
            [ToolCall(id="s1", name="activate", input={"id": "tracker"})],
            "Activated tracker.",
            [ToolCall(id="m2", name="tracker__list_issues", input={})],
            "There are open issues.",
        ]
    )
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    async with await mount_mcp(glove, adapter=MemoryMcpAdapter("conv"), entries=catalogue):
        glove.build()
        with telemetry().collect() as t:
            result = await glove.process_request("what's open in the tracker?")
    assert result.text == "There are open issues."
    spans = t.spans()
    found = t.one(FIND_CAPABILITY)
    assert parent_of(found, spans) is t.one(f"execute_tool {FIND_CAPABILITY}")
    assert attrs(found)["glove.discovery.activated"] == ("tracker",)
    sub = [s for s in t.named("invoke_agent") if parent_of(s, spans) is found]
    assert len(sub) == 1
    assert attrs(sub[0])[Attr.CONVERSATION] == f"{FIND_CAPABILITY}:m1"
    activation = t.one("activate tracker")
    assert _chain(activation, spans)[1:4] == [
        "execute_tool activate",
        "invoke_agent",
        FIND_CAPABILITY,
    ]
    # Connecting and listing the tracker's tools happen under the activation.
    under = {s.name for s in spans if sid(activation) in _ancestors(s, spans)}
    assert {"tools/list"} <= under
    assert under & {"initialize", "server/discover"}
    # The main agent then calls the tool it found.
    assert parent_of(t.one("tools/call list_issues", SpanKind.CLIENT), spans) is t.one(
        "execute_tool tracker__list_issues"
    )


def _ancestors(span: ReadableSpan, spans: list[ReadableSpan]) -> set[int]:
    out: set[int] = set()
    parent = parent_of(span, spans)
    while parent is not None:
        out.add(sid(parent))
        parent = parent_of(parent, spans)
    return out


async def test_a_stdio_server_receives_our_trace_context_in_meta() -> None:
    connection = await connect_mcp("meta", "", command=META_SERVER)
    try:
        with telemetry().collect() as t:
            result = await connection.call_tool("request_meta", {})
    finally:
        await connection.close()
    [content] = result.content
    assert isinstance(content, McpTextContent)
    meta: dict[str, Any] = json.loads(content.text)
    client = t.one("tools/call request_meta", SpanKind.CLIENT)
    assert attrs(client)["network.transport"] == "pipe"
    trace_id = f"{client.context.trace_id:032x}"
    version, sent_trace, parent_id, _flags = meta["traceparent"].split("-")
    assert (version, sent_trace) == ("00", trace_id)
    # The parent it names is the SDK's send span, our client span's child.
    send = t.one("MCP send tools/call request_meta")
    assert parent_id == f"{sid(send):016x}"
    assert parent_of(send, t.spans()) is client


async def test_no_token_key_or_url_credential_becomes_an_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token, api_key, in_query = "tok-secret-4b1d", "sk-ant-secret-9f3e", "query-secret-77aa"
    # Content capture on: even then, what the model and the tools see is all that is recorded.
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    async with serve("notes", tokens={token}) as url, serve_fake_anthropic() as fake:
        fake.script(
            FakeToolUse("notes__search_pages", {"query": "plans"}, id="c1"), "found nothing"
        )
        entry = McpCatalogueEntry(
            id="notes", name="Notes", url=f"{url}?api_key={in_query}", description="Notes."
        )
        model = AnthropicModel("claude-test", api_key=api_key, base_url=fake.base_url)
        glove = Glove(model=model, system_prompt="s", server_mode=True)
        adapter = MemoryMcpAdapter("conv", active=["notes"], tokens={"notes": token})
        with telemetry().collect() as t:
            async with await mount_mcp(glove, adapter=adapter, entries=[entry]):
                glove.build()
                result = await glove.process_request("search")
        await model.aclose()
    assert result.text == "found nothing"
    assert t.named("tools/call search_pages", SpanKind.CLIENT)
    values = all_attribute_values(t.spans()) + metric_attribute_values(telemetry().reader)
    for secret in (token, api_key, in_query):
        assert not any(secret in v for v in values), secret


def _sampling_server() -> MCPServer:
    server = MCPServer("sampler", log_level="WARNING")

    @server.tool()
    async def summarize(text: str, ctx: Context[Any, Any]) -> str:
        """Summarise text with the client's model."""
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(
                        role="user", content=types.TextContent(text=f"Summarise: {text}")
                    )
                ],
                max_tokens=100,
            )
        )
        result = await ctx.session.send_request(request, types.CreateMessageResult)
        assert isinstance(result.content, types.TextContent)
        return result.content.text

    return server


async def test_a_sampling_request_is_answered_under_the_servers_trace_context() -> None:
    model = ScriptedModel(["one line"])
    async with (
        serve(_sampling_server()) as url,
        await connect_mcp("sampler", url, sampling_model=model, protocol="legacy") as connection,
    ):
        with telemetry().collect() as t:
            result = await connection.call_tool("summarize", {"text": "the memo"})
    assert not result.is_error
    spans = t.spans()
    answered = t.one("sampling/createMessage", SpanKind.SERVER)
    assert attrs(answered)["glove.mcp.server.id"] == "sampler"
    assert attrs(answered)["mcp.method.name"] == "sampling/createMessage"
    client = t.one("tools/call summarize", SpanKind.CLIENT)
    assert answered.context is not None and client.context is not None
    assert answered.context.trace_id == client.context.trace_id
    # Its parent is the span whose context the server's request carried in _meta: the SDK's
    # send span on the server's side, under the server's span of the tool call.
    parent = parent_of(answered, spans)
    assert parent is not None, [s.name for s in spans]
    assert parent.name == "MCP send sampling/createMessage"
    assert _chain(parent, spans)[1:3] == ["tools/call summarize", "MCP send tools/call summarize"]
    assert sid(client) in _ancestors(answered, spans)
