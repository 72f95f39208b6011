"""A stdio server's stderr goes to the log — bounded per line, rate-limited, prefixed with the
server id — never to the terminal the command writes to; when the server fails to start,
its last lines are logged at WARNING (what the terminal shows). A line printed to stdout that
is not JSON-RPC is one INFO line under the server's id, not the SDK's ERROR and traceback."""

from __future__ import annotations

import logging
import sys
import textwrap
from pathlib import Path

import pytest

from glove_mcp import connect_mcp
from glove_mcp.connect._stderr import BURST_LINES, MAX_LINE_CHARS
from glove_mcp.errors import GloveMcpError

FLOOD = textwrap.dedent(
    """
    import sys
    from mcp.server.mcpserver import MCPServer

    for i in range(3000):
        print(f"flood line {i}", file=sys.stderr)
    print("x" * 50000, file=sys.stderr)
    sys.stderr.flush()
    server = MCPServer("flood", log_level="WARNING")

    @server.tool()
    def ping() -> str:
        "Answer pong."
        print("ping called " * 3, file=sys.stderr, flush=True)
        return "pong"

    server.run("stdio")
    """
)

FAILING = textwrap.dedent(
    """
    import sys
    for i in range(50):
        print(f"loading module {i}", file=sys.stderr)
    print("fatal: NOTION_TOKEN is not set", file=sys.stderr)
    sys.exit(1)
    """
)

CHATTY = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    print("Loading configuration from .env file...", flush=True)  # on stdout
    server = MCPServer("chatty", log_level="WARNING")

    @server.tool()
    def ping() -> str:
        "Answer pong."
        return "pong"

    server.run("stdio")
    """
)

HERE = Path(__file__).resolve().parents[1] / "interop"
NODE = HERE / "node_modules" / "node" / "bin" / "node"
EVERYTHING = HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"


def script(tmp_path: Path, name: str, text: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return [sys.executable, str(path)]


def lines_of(caplog: pytest.LogCaptureFixture, server: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == f"glove_mcp.stderr.{server}"]


async def test_a_flooding_server_is_bounded_and_kept_off_the_terminal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.stderr")
    async with await connect_mcp("flood", "", command=script(tmp_path, "flood", FLOOD)) as conn:
        assert [t.name for t in await conn.list_tools()] == ["ping"]
        assert (await conn.call_tool("ping", {})).text == "pong"
    logged = lines_of(caplog, "flood")
    assert logged and all(line.startswith("[flood] ") for line in logged)
    # 3,002 lines arrived at once: the burst passes, the rest is counted, not logged.
    assert len(logged) < BURST_LINES + 50
    assert any("stderr lines dropped" in line for line in logged)
    assert all(len(line) < MAX_LINE_CHARS + 100 for line in logged)
    out, err = capfd.readouterr()
    assert "flood line" not in out + err and "ping called" not in out + err


async def test_a_server_that_fails_to_start_shows_its_last_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.stderr")
    with pytest.raises(GloveMcpError):
        await connect_mcp("notion", "", command=script(tmp_path, "failing", FAILING))
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    text = warning.getMessage()
    assert "'notion' stopped before it was ready" in text
    assert "  [notion] fatal: NOTION_TOKEN is not set" in text
    assert "loading module 49" in text and "loading module 0\n" not in text  # the last lines
    _, err = capfd.readouterr()
    assert "NOTION_TOKEN" not in err


async def test_a_line_on_stdout_is_one_log_line_naming_the_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    async with await connect_mcp("chatty", "", command=script(tmp_path, "chatty", CHATTY)) as conn:
        assert (await conn.call_tool("ping", {})).text == "pong"
    assert not [r for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]
    assert "[chatty] stdout, not JSON-RPC (ignored): Loading configuration from .env file..." in (
        lines_of(caplog, "chatty")
    )
    out, err = capfd.readouterr()
    assert "Loading configuration" not in out + err


@pytest.mark.skipif(
    not (NODE.is_file() and EVERYTHING.is_file()), reason="tests/interop/install.sh"
)
async def test_server_everything_over_stdio_logs_its_stderr(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="glove_mcp.stderr")
    command = [str(NODE), str(EVERYTHING), "stdio"]
    async with await connect_mcp("everything", "", command=command) as conn:
        assert await conn.list_tools()
    logged = lines_of(caplog, "everything")
    assert logged and all(line.startswith("[everything] ") for line in logged)
    _, err = capfd.readouterr()
    assert not any(line in err for line in (x.removeprefix("[everything] ") for x in logged))
