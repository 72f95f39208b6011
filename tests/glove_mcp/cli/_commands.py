"""Shared parts of issue 21's command tests: local servers started once per test session with
``python -m glove_mcp.testing`` (an open tracker, one behind a local OAuth server that
approves, one whose OAuth server denies), and helpers that run ``glove-mcp`` as a real
subprocess, piped or on a pseudo-terminal.

``tests/conftest.py`` registers the ``servers`` fixture, so every module shares one set; a test
module must not import it by name (that would make it a fixture of that module, started
again for it).
"""

from __future__ import annotations

import asyncio
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "Ran",
    "Servers",
    "authorize_url",
    "browse",
    "cli",
    "cli_env",
    "in_process",
    "run_cli",
    "run_on_terminal",
    "servers",
    "serving",
    "start_cli",
    "write_catalogue",
]

CLI = (sys.executable, "-m", "glove_mcp.cli")
_GLOVE_VARIABLES = ("GLOVE_HOME", "GLOVE_MODEL", "GLOVE_API_KEY", "NO_COLOR", "TERM")


@dataclass(frozen=True)
class Servers:
    """The session's local servers.

    Attributes:
        open: an open tracker (no login).
        oauth: a tracker behind a local OAuth server that approves every login.
        denied: a tracker behind a local OAuth server that denies every login.
    """

    open: str
    oauth: str
    denied: str


@contextmanager
def serving(*specs: Sequence[str]) -> Iterator[list[str]]:
    """Start one ``python -m glove_mcp.testing ARGS`` child per spec, all at once; yields
    their URLs and stops them (their stdin closes) afterwards."""
    with ExitStack() as stack:
        started = []
        for spec in specs:
            process = stack.enter_context(
                subprocess.Popen(
                    [sys.executable, "-m", "glove_mcp.testing", *spec],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
            )
            stack.callback(_stop, process)
            started.append(process)
        urls = []
        for process in started:
            assert process.stdout is not None
            line = process.stdout.readline().decode().strip()
            assert line.startswith("http://"), f"a test server did not start: {line!r}"
            urls.append(line)
        yield urls


def _stop(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    process.stdin.close()  # the server's way to stop; it may wait on open connections
    try:
        process.wait(2)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    """Three local servers in child processes, started together, shared by every test."""
    with serving(("tracker",), ("tracker", "--oauth"), ("tracker", "--oauth", "--deny")) as urls:
        yield Servers(*urls)


def write_catalogue(path: Path, **servers: str | Sequence[str]) -> Path:
    """A TOML catalogue: each keyword is an id, its value a URL or a stdio command."""
    lines = ["# written by the test: this comment must survive edits", ""]
    for server_id, target in servers.items():
        lines += [
            "[[servers]]",
            f'id = "{server_id}"',
            f'name = "{server_id.title()}"',
            f'description = "The {server_id} server: issues, tickets and bugs."',
        ]
        if isinstance(target, str):
            lines.append(f'url = "{target}"')
        else:
            lines.append("command = [" + ", ".join(f'"{part}"' for part in target) + "]")
        lines += ['tags = ["issues"]', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The command's environment: no keys or glove settings from outside, ``GLOVE_HOME``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ANTHROPIC") and k not in _GLOVE_VARIABLES
    }
    env["GLOVE_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Ran:
    """A finished run of the command."""

    status: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        """The ``glove-mcp:`` lines on stderr."""
        return [line for line in self.err.splitlines() if line.startswith("glove-mcp:")]


def run_cli(
    *args: str,
    home: Path,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    timeout: float = 90,
) -> Ran:
    """Run ``glove-mcp ARGS`` to the end, piped."""
    done = subprocess.run(
        [*CLI, *args],
        input=stdin,
        capture_output=True,
        env=dict(env) if env is not None else cli_env(home),
        timeout=timeout,
        check=False,
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


async def start_cli(
    *args: str, home: Path, env: Mapping[str, str] | None = None
) -> asyncio.subprocess.Process:
    """Start ``glove-mcp ARGS`` with piped stdin, stdout and stderr."""
    return await asyncio.create_subprocess_exec(
        *CLI,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env) if env is not None else cli_env(home),
    )


def in_process(
    *args: str,
    capsys: pytest.CaptureFixture[str],
    home: Path | None = None,
    stdin: str = "",
    env: Mapping[str, str] | None = None,
) -> Ran:
    """Run ``glove-mcp ARGS`` in this process (``main``), as ``run_cli`` runs it in a child:
    with ``home``, the environment of ``cli_env(home)`` (without, the test's own, where it
    set ``GLOVE_HOME``), ``env`` added; ``stdin`` as its input; its logging on its stderr as
    the command sets it up in a process of its own. For the cases where what is checked is
    the command's messages, files and exit status; what needs a process (start-up, signals,
    a terminal, what prints at exit) keeps ``run_cli``. Sync tests only (the command runs
    its own event loop)."""
    import io
    import logging

    from glove_mcp.cli import main

    root = logging.getLogger()
    quietened = {name: logging.getLogger(name).level for name in ("mcp", "asyncio")}
    kept_handlers, kept_level = root.handlers[:], root.level
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        if home is not None:
            for name in list(os.environ):
                if name.startswith("ANTHROPIC") or name in _GLOVE_VARIABLES:
                    patch.delenv(name)
            patch.setenv("GLOVE_HOME", str(home))
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        patch.setattr(sys, "stdin", io.StringIO(stdin))
        # No handler on the root logger, as in a fresh process: the command's own
        # logging.basicConfig then writes to (the captured) stderr, so a test of "nothing
        # but one line on stderr" sees its log lines too.
        root.handlers = []
        try:
            status = main(list(args))
        except SystemExit as exited:  # argparse's errors and --help
            status = exited.code if isinstance(exited.code, int) else 2
        finally:
            root.handlers = kept_handlers
            root.setLevel(kept_level)
            for name, level in quietened.items():
                logging.getLogger(name).setLevel(level)
    captured = capsys.readouterr()
    return Ran(status, captured.out, captured.err)


def cli(*args: str) -> list[str]:
    """The command line of ``glove-mcp ARGS``."""
    return [*CLI, *args]


def run_on_terminal(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    stdin: bytes = b"",
    timeout: float = 90,
) -> tuple[int, str]:
    """Run a command with stdout and stderr on a pseudo-terminal; returns the status and all
    it wrote there."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        list(args), stdin=subprocess.PIPE, stdout=terminal, stderr=terminal, env=dict(env)
    )
    os.close(terminal)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert process.stdin is not None
        process.stdin.write(stdin)
        process.stdin.close()
        status = process.wait(timeout)
        reader.join(timeout)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
    return status, b"".join(chunks).decode(errors="replace")


async def browse(url: str) -> None:
    """The person's browser: follow the authorization redirects to the callback listener."""
    from glove_mcp.cli.demo_stack import _browse

    await _browse(url)


def authorize_url(text: str) -> str | None:
    """The authorization URL the login printed, if it did."""
    found = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S+)", text)
    return found.group(1) if found else None
