"""Start the FastMCP 4 test server (``apps_skills_server.py``) from its own virtualenv.

``tests/interop/fastmcp/install.sh`` makes the virtualenv. Without it ``fastmcp_url`` skips the
test, unless ``GLOVE_REQUIRE_INTEROP=1``, which makes a missing install a failure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
PYTHON = HERE / ".venv" / "bin" / "python"
SERVER = HERE / "apps_skills_server.py"


def require_fastmcp() -> None:
    """Skip (or fail under ``GLOVE_REQUIRE_INTEROP=1``) when FastMCP is not installed."""
    if PYTHON.exists():
        return
    why = "FastMCP is not installed: run tests/interop/fastmcp/install.sh"
    if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
        pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {why}", pytrace=False)
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def fastmcp_server() -> Iterator[str]:
    """The test server's MCP endpoint, for as long as the block runs."""
    require_fastmcp()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # A file, not a pipe: a full pipe would stall the server.
    with tempfile.TemporaryFile() as log:
        yield from _run(port, env, log)


def _run(port: int, env: dict[str, str], log: Any) -> Iterator[str]:
    process = subprocess.Popen(
        [str(PYTHON), str(SERVER), str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                log.seek(0)
                err = log.read().decode(errors="replace")
                raise RuntimeError(f"the FastMCP server exited: {err[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the FastMCP server did not listen within 60 s") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
