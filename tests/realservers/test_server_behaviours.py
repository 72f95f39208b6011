"""How the client meets published servers' habits, each against the server that has it:

- ``@modelcontextprotocol/server-pdf`` answers ``read_pdf_bytes`` with a short text and a
  structured result holding the file as base64: the model reads the text, never the base64.
- ``mcp-server-time`` and ``mcp-server-git`` have no resources: no ``<id>__read_resource``;
  ``mcp-server-sqlite`` lists one: its reader is offered.
- ``office-word-mcp-server`` (FastMCP) writes a banner and notes on stderr and a line of text on
  stdout: none of it reaches the terminal; stderr goes to the log under the server's id, and the
  stdout line is one short log line, not a traceback.
- ``@playwright/mcp`` over HTTP, reached at a host it does not serve, answers 403 "Access is only
  allowed at localhost:N": the connect error keeps the status and that line.

(Restart recovery and elicitation are tested against server-everything in ``tests/interop``.)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from glove_core import Glove, ScriptedModel, ToolCall, ToolResultData
from glove_core.testing import RecordingSubscriber
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.mount.bridge import bridge_mcp_tool
from glove_mcp.subscribers import McpServerFailed
from tests.realservers import corpus
from tests.realservers.pdf_file import write_pdf


def _results(glove: Glove) -> list[ToolResultData]:
    last = glove.model.requests[-1]  # type: ignore[attr-defined]
    return [r.result for m in last.messages for r in (m.tool_results or [])]


async def test_pdf_bytes_reach_the_model_as_text_not_base64(tmp_path: Path) -> None:
    pdf = tmp_path / "report.pdf"
    write_pdf(pdf, "Quarterly report: revenue grew")
    encoded = base64.b64encode(pdf.read_bytes()).decode()
    script: list[Any] = [
        [ToolCall(id="c1", name="pdf__read_pdf_bytes", input={"url": str(pdf)})],
        "done",
    ]
    glove = Glove(model=ScriptedModel(script), system_prompt="t", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=["pdf"]), [corpus.PDF.entry(str(tmp_path))]
    ) as mount:
        connection = mount.connection("pdf")
        assert connection is not None
        # read_pdf_bytes is for the server's MCP Apps view alone (visibility ["app"]): the
        # mount keeps it from the model. Bridged here by hand, its result passes the rules
        # every bridged result passes.
        assert "pdf__read_pdf_bytes" not in {t.name for t in mount.get_tools()}
        [listed] = [t for t in await connection.list_tools() if t.name == "read_pdf_bytes"]
        glove.fold(bridge_mcp_tool(connection, listed, glove.server_mode))
        raw = await connection.call_tool("read_pdf_bytes", {"url": str(pdf)})
        await glove.build().process_request("read the report")
    # The server does send the bytes as base64 in its structured result …
    assert raw.structured_content is not None and encoded[:40] in str(raw.structured_content)
    [result] = _results(glove)
    assert result.status == "success", result.message
    text = str(result.data)
    # … and the model reads the server's text instead.
    assert encoded[:40] not in text and "JVBERi0" not in text
    assert len(text) < len(encoded) + 2_000


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """An empty git repository (what mcp-server-git needs to start)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


@pytest.mark.parametrize(
    ("server", "args", "reader"),
    [
        (corpus.TIME, lambda folder: (), False),
        (corpus.GIT, lambda folder: ("--repository", str(folder)), False),
        (corpus.SQLITE, lambda folder: ("--db-path", str(folder / "d.db")), True),
    ],
    ids=["time", "git", "sqlite"],
)
async def test_the_resource_reader_is_offered_only_where_resources_are_listed(
    server: corpus.Server, args: Any, reader: bool, repository: Path
) -> None:
    tmp_path = repository
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=[server.id]), [server.entry(*args(tmp_path))]
    ) as mount:
        names = mount.tool_names(server.id)
    assert names, f"{server.package} did not mount"
    assert (f"{server.id}__read_resource" in names) is reader


async def test_a_fastmcp_servers_stderr_and_stdout_stay_off_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    async with await mount_mcp(
        glove, MemoryMcpAdapter("conv", active=["word"]), [corpus.WORD.entry()]
    ) as mount:
        assert mount.loaded == ["word"]
    captured = capfd.readouterr()
    assert "FastMCP" not in captured.err and "Loading configuration" not in captured.err
    assert captured.out == ""
    stderr_lines = [r for r in caplog.records if r.name == "glove_mcp.stderr.word"]
    assert stderr_lines, "the server's stderr was not logged"
    assert all(r.getMessage().startswith("[word] ") for r in stderr_lines)
    assert all(r.levelno <= logging.INFO for r in stderr_lines)
    # The line it printed to stdout: one short log line under the server's id, no traceback.
    assert not [r for r in caplog.records if r.exc_info is not None]
    [noise] = [r for r in caplog.records if "Loading configuration" in r.getMessage()]
    assert noise.name == "glove_mcp.stderr.word" and noise.levelno == logging.INFO
    assert noise.getMessage() == (
        "[word] stdout, not JSON-RPC (ignored): Loading configuration from .env file..."
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def _playwright_http() -> AsyncIterator[int]:
    """``@playwright/mcp`` over HTTP on 127.0.0.1, serving the host ``localhost:N`` only (what
    it does by default where ``localhost`` is 127.0.0.1). No browser is started."""
    corpus.PLAYWRIGHT.require()
    port = _free_port()
    argv = corpus.PLAYWRIGHT.argv(
        "--host", "127.0.0.1", "--port", str(port), "--allowed-hosts", f"localhost:{port}"
    )
    env = {"PATH": os.environ.get("PATH", ""), **corpus.BLOCKED_ENV}
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            while True:
                line = (await process.stdout.readline()).decode()
                if not line:
                    pytest.fail("@playwright/mcp stopped before it listened")
                if f"Listening on http://localhost:{port}" in line:
                    break
        drain = asyncio.create_task(process.stdout.read())
        yield port
        drain.cancel()
    finally:
        process.terminate()
        await process.wait()


async def test_a_refused_connect_keeps_the_status_and_the_servers_words() -> None:
    recorder = RecordingSubscriber()
    glove = Glove(model=ScriptedModel(["ok"]), system_prompt="t", server_mode=True)
    glove.add_subscriber(recorder)
    async with _playwright_http() as port:
        entry = McpCatalogueEntry(
            id="playwright",
            name="Playwright",
            description="d",
            url=f"http://127.0.0.1:{port}/mcp",
        )
        async with await mount_mcp(
            glove, MemoryMcpAdapter("conv", active=["playwright"]), [entry]
        ) as mount:
            assert mount.loaded == []
    [failed] = recorder.of(McpServerFailed)
    assert failed.server == "playwright"
    assert "403" in failed.error
    assert f"Access is only allowed at localhost:{port}" in failed.error
