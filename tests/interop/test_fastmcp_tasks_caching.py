"""Interop: FastMCP 4 from PyPI (pinned in ``tests/interop/fastmcp/requirements*.txt``) as the
outside implementation of two 2026-07-28 features: the tasks extension (SEP-2663, served by
``fastmcp-tasks``: task handles the server chooses to return, ``tasks/get``, ``tasks/cancel``)
and list caching (SEP-2549: ``ttlMs``/``cacheScope`` on lists).

Each server runs in its own virtualenv (``tests/interop/fastmcp/install.sh``). Without them the
module is skipped, unless ``GLOVE_REQUIRE_INTEROP=1``, which makes a missing install a failure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from glove_mcp import connect_mcp
from glove_mcp.connect import McpClientPool
from glove_mcp.errors import McpTaskTimeoutError, McpTimeoutError
from glove_mcp.types import McpTextContent

HERE = Path(__file__).resolve().parent / "fastmcp"
PLAIN = HERE / ".venv" / "bin" / "python"
TASKS = HERE / "tasks" / ".venv" / "bin" / "python"

_missing = [
    f"tests/interop/{p.relative_to(HERE.parent)}" for p in (PLAIN, TASKS) if not p.is_file()
]
if _missing:
    _why = (
        f"FastMCP is not installed (missing: {', '.join(_missing)}): "
        "run tests/interop/fastmcp/install.sh"
    )
    if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
        pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {_why}", pytrace=False)
    pytest.skip(_why, allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _run(python: Path, script: str, *args: str) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [str(python), str(HERE / script), str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    err = process.stderr.read().decode() if process.stderr else ""
                    raise RuntimeError(f"{script} did not start: {err[-2000:]}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture(scope="module")
def tasks_url() -> Iterator[str]:
    yield from _run(TASKS, "tasks_server.py")


@pytest.fixture(scope="module")
def public_url() -> Iterator[str]:
    yield from _run(PLAIN, "cached_server.py", "public")


@pytest.fixture(scope="module")
def private_url() -> Iterator[str]:
    yield from _run(PLAIN, "cached_server.py", "private")


def _text(result: object) -> str:
    content = getattr(result, "content", [])
    return "".join(c.text for c in content if isinstance(c, McpTextContent))


# -- tasks --------------------------------------------------------------------------------------


async def test_a_task_the_server_creates_is_followed_to_its_result(tasks_url: str) -> None:
    reports: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append(message or "")

    async with await connect_mcp("tasks", tasks_url) as conn:
        assert conn.protocol_version == "2026-07-28"
        result = await conn.call_tool(
            "slow_sum", {"a": 2, "b": 3, "seconds": 0.5}, on_progress=progress
        )
    assert not result.is_error
    assert "5" in _text(result) or result.structured_content == {"result": 5}
    # The task's statuses reached the caller as progress, first the one it was created with.
    assert reports and reports[0].startswith("task working")
    assert any(r.startswith("task completed") for r in reports)


async def test_a_failed_task_is_an_error_result_naming_the_reason(tasks_url: str) -> None:
    async with await connect_mcp("tasks", tasks_url) as conn:
        result = await conn.call_tool("failing", {"why": "the disk is full"})
    assert result.is_error
    assert "the disk is full" in _text(result)


async def test_a_task_past_the_deadline_times_out_like_any_call(tasks_url: str) -> None:
    async with await connect_mcp("tasks", tasks_url, call_timeout=1.0) as conn:
        # The call's deadline covers the task (tasks/cancel is sent on the way out).
        with pytest.raises((McpTimeoutError, McpTaskTimeoutError)):
            await conn.call_tool("slow_sum", {"a": 1, "b": 1, "seconds": 30})
        # The connection is fine afterwards: a plain call still answers.
        quick = await conn.call_tool("quick", {"word": "still here"})
    assert _text(quick) == "still here"


# -- list caching -------------------------------------------------------------------------------


async def _listed(url: str, pool: McpClientPool) -> int:
    """How many tools/list the server answered, after one connection listed and called."""
    async with await connect_mcp("cached", url, pool=pool) as conn:
        assert {t.name for t in await conn.list_tools()} >= {"echo", "list_count"}
        await conn.call_tool("list_count", {})
        # Asked again: a listing the first call's result check may have caused is counted.
        result = await conn.call_tool("list_count", {})
    return int(_text(result) or (result.structured_content or {}).get("result", -1))


async def test_fastmcp_public_lists_are_listed_once_per_pool(public_url: str) -> None:
    async with McpClientPool() as pool:
        first = await _listed(public_url, pool)
        second = await _listed(public_url, pool)
    # Neither the second connection's listing nor its calls' result checks reached the server.
    assert second == first


async def test_fastmcp_private_lists_are_not_shared(private_url: str) -> None:
    async with McpClientPool() as pool:
        first = await _listed(private_url, pool)
        second = await _listed(private_url, pool)
    assert second > first
