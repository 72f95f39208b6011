"""Credentials in a catalogue URL (user-info, an ``api_key`` in the query) never reach what a
person, a follower, a log or the model sees: the activation error the discovery subagent gets,
the headless server's stream items, log records, exceptions and events."""

from __future__ import annotations

import logging
import socket
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from glove_core import Glove, ScriptedModel, ToolCall
from glove_core.redaction import redact_url
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, connect_mcp, mount_mcp
from glove_mcp.cli._log_redaction import RedactingFilter
from glove_mcp.errors import GloveMcpError
from glove_mcp.server import HeadlessServer, SessionStore
from tests.glove_mcp.server._harness import AUTH, KEY, running, sse_events

SECRETS = ("S3CRET", "K3Y-123", "bob")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def credentialed_url() -> str:
    return f"http://bob:S3CRET@127.0.0.1:{closed_port()}/mcp?api_key=K3Y-123#t"


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (
            secret,
            text[max(0, text.find(secret) - 300) : text.find(secret) + 100],
        )


def entry(url: str) -> McpCatalogueEntry:
    return McpCatalogueEntry(id="tracker", name="Tracker", description="bugs and issues", url=url)


def test_redact_url_drops_user_info_query_and_fragment() -> None:
    assert redact_url("http://bob:S3CRET@host:8/mcp?api_key=x#t") == "http://…@host:8/mcp?…#…"
    assert redact_url("https://mcp.example.com/mcp") == "https://mcp.example.com/mcp"
    assert redact_url("http://[bad/mcp?x") == "http://…"


async def test_connect_error_names_the_server_without_credentials() -> None:
    url = credentialed_url()
    with pytest.raises(GloveMcpError) as caught:
        await connect_mcp("tracker", url, connect_timeout=5)
    assert_clean(str(caught.value) + repr(caught.value) + repr(vars(caught.value)))
    assert "127.0.0.1" in str(caught.value)


async def test_activation_error_the_model_sees(caplog: pytest.LogCaptureFixture) -> None:
    """What the model, the subscribers and the log see. Log lines pass the filter the
    command puts on its handler (``--debug`` shows the SDK's and httpx's lines, which name
    URLs verbatim); glove's own lines are clean before it."""
    caplog.set_level(logging.DEBUG)
    caplog.handler.addFilter(RedactingFilter())
    subagent = ScriptedModel([[ToolCall(id="a", name="activate", input={"id": "tracker"})], "no"])
    model = ScriptedModel(
        [[ToolCall(id="f", name="find_capability", input={"need": "bugs"})], "sorry"]
    )
    glove = Glove(model=model, system_prompt="s", server_mode=True)
    recorder = RecordingSubscriber()
    glove.add_subscriber(recorder)
    adapter = MemoryMcpAdapter("c")
    async with await mount_mcp(
        glove, adapter, [entry(credentialed_url())], subagent_model=subagent
    ):
        await glove.build().process_request("any bugs?")
    seen = [repr(r) for r in subagent.requests[-1].messages]
    seen += [repr(r) for r in model.requests[-1].messages]
    seen += [repr(e) for e in recorder.events]
    seen += [record.getMessage() for record in caplog.records]
    own = [r.getMessage() for r in caplog.records if r.name.startswith("glove")]
    assert own and all("S3CRET" not in line for line in own)
    assert "127.0.0.1" in "".join(repr(r) for r in subagent.requests[-1].messages)
    assert_clean("\n".join(seen))


async def test_headless_stream_items(tmp_path: Path) -> None:
    url = credentialed_url()

    async def factory(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        glove = Glove(
            model=ScriptedModel(
                [[ToolCall(id="f", name="find_capability", input={"need": "bugs"})], "sorry"]
            ),
            system_prompt="s",
            store=store,
            server_mode=True,
        )
        subagent = ScriptedModel(
            [[ToolCall(id="a", name="activate", input={"id": "tracker"})], "it failed"]
        )
        mount = await mount_mcp(
            glove, MemoryMcpAdapter(session_id), [entry(url)], subagent_model=subagent
        )
        stack.push_async_callback(mount.aclose)
        return glove

    server = HeadlessServer(str(tmp_path / "s.db"), KEY, factory)
    async with running(server) as client:
        await client.post("/sessions", headers=AUTH, json={"id": "s1"})
        reply = await client.post("/sessions/s1/messages", headers=AUTH, json={"text": "bugs?"})
        history = await client.get("/sessions/s1", headers=AUTH)
    assert sse_events(reply.text)
    assert_clean(reply.text + history.text)
