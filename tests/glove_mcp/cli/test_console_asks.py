"""Every question the chat's agent asks, answered in the terminal: ``glove-mcp chat`` as a
real process on a pseudo-terminal (stdin, stdout and stderr), against the local tracker, with
a scripted model that finds the tracker, has discovery ask which server to use, and calls a
tool that needs permission. Piped stdin: the same questions are refused at once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.glove_mcp.cli._commands import CLI, Servers, cli_env, run_cli, write_catalogue

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

CREATE = {"name": "tracker__create_issue", "input": {"title": "Printer on fire"}}


class Terminal:
    """A command running on a pseudo-terminal: what it wrote so far, and typing into it."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        import pty

        self._controller, terminal = pty.openpty()
        self.process = subprocess.Popen(
            args, stdin=terminal, stdout=terminal, stderr=terminal, env=env, close_fds=True
        )
        os.close(terminal)
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._seen = 0

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._controller, 4096)
            except OSError:  # EIO: the process closed the terminal
                return
            if not chunk:
                return
            with self._lock:
                self._chunks.append(chunk)

    @property
    def text(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode(errors="replace")

    def expect(self, pattern: str, timeout: float = 60) -> str:
        """Wait until ``pattern`` appears after what the last ``expect`` matched."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.compile(pattern).search(self.text, self._seen)
            if found:
                self._seen = found.end()
                return found.group(0)
            if self.process.poll() is not None and self._reader.is_alive() is False:
                break
            time.sleep(0.02)
        raise AssertionError(f"never saw {pattern!r}; the terminal shows:\n{self.text}")

    def type(self, line: str) -> None:
        os.write(self._controller, line.encode() + b"\r")

    def finish(self, timeout: float = 30) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._reader.join(5)
            os.close(self._controller)


def chat_on_terminal(tmp_path: Path, servers: Servers, replies: list[Any]) -> Terminal:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.open)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    args = [
        *CLI,
        "chat",
        "--catalogue",
        str(catalogue),
        "--script",
        str(script),
        "--db",
        str(tmp_path / "chat.db"),
    ]
    return Terminal(args, cli_env(tmp_path, TERM="xterm", NO_COLOR="1"))


def found_and_picked(*then: Any) -> list[Any]:
    """The script: find a tracker, ask the user which server (the picker), activate it, then
    whatever the main agent does next."""
    return [
        {"tool_calls": [{"name": "find_capability", "input": {"need": "bug tracker"}}]},
        {
            "tool_calls": [
                {"name": "ask_user", "input": {"question": "Which one?", "options": ["tracker"]}}
            ]
        },
        {"tool_calls": [{"name": "activate", "input": {"id": "tracker"}}]},
        "Activated the tracker.",
        *then,
    ]


def test_the_picker_then_a_permission_allowed_always(tmp_path: Path, servers: Servers) -> None:
    term = chat_on_terminal(
        tmp_path,
        servers,
        found_and_picked(
            {"tool_calls": [CREATE]},
            {"tool_calls": [CREATE]},  # the same input again: remembered, not asked
            "Filed it twice.",
        ),
    )
    term.expect(r"you> ")
    term.type("file a bug: the printer is on fire")
    term.expect(r"Which one\?")
    term.expect(r"1\) Tracker \[tracker\]")
    term.expect(r"0\) none of them")
    term.expect(r"pick 0-1: ")
    term.type("1")
    term.expect(r"\(picked tracker\)")
    term.expect(r"allow tracker__create_issue\? .*Printer on fire")
    term.expect(r"n = deny: ")
    time.sleep(0.5)  # the spinner redraws every 0.1 s when it runs
    assert "running" not in term.text.rsplit("n = deny: ", 1)[1]  # paused while asking
    term.type("a")
    term.expect(r"\(allowed tracker__create_issue; not asked again for this input\)")
    term.expect(r"← tracker__create_issue: ")
    term.expect(r"← tracker__create_issue: ")
    term.expect(r"Filed it twice\.")
    term.expect(r"you> ")
    term.type("/quit")
    assert term.finish() == 0
    assert term.text.count("allow tracker__create_issue?") == 1


def test_a_permission_allowed_once_is_asked_again_and_denied(
    tmp_path: Path, servers: Servers
) -> None:
    term = chat_on_terminal(
        tmp_path,
        servers,
        found_and_picked({"tool_calls": [CREATE]}, {"tool_calls": [CREATE]}, "Done."),
    )
    term.expect(r"you> ")
    term.type("file a bug")
    term.expect(r"pick 0-1: ")
    term.type("tracker")  # an id works as well as its number
    term.expect(r"n = deny: ")
    term.type("y")
    term.expect(r"\(allowed tracker__create_issue once\)")
    term.expect(r"← tracker__create_issue: ")
    term.expect(r"allow tracker__create_issue\?")  # once was once: asked again
    term.expect(r"n = deny: ")
    term.type("n")
    term.expect(r"\(denied tracker__create_issue\)")
    term.expect(r"← tracker__create_issue \[error\]: the user denied permission")
    term.expect(r"Done\.")
    term.expect(r"you> ")
    term.type("/quit")
    assert term.finish() == 0


def test_without_a_terminal_every_question_is_refused_at_once(
    tmp_path: Path, servers: Servers
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.open)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(found_and_picked({"tool_calls": [CREATE]}, "Gave up.")))
    ran = run_cli(
        "chat",
        "--catalogue",
        str(catalogue),
        "--script",
        str(script),
        "--db",
        str(tmp_path / "chat.db"),
        home=tmp_path,
        stdin=b"file a bug\n",
        timeout=60,  # a question that waited for an answer would hang here
    )
    assert ran.status == 0, ran.err
    assert "picked no server: stdin is not a terminal, so nobody can answer" in ran.out
    assert "denied tracker__create_issue: stdin is not a terminal" in ran.out
    assert "the user denied permission" in ran.out
    assert "Gave up." in ran.out


def test_the_renderers_answered_are_the_ones_asked() -> None:
    # Named in _console_asks so the chat does not import discovery and sampling early.
    from glove_mcp.cli.console_asks import PICKER, SAMPLING
    from glove_mcp.connect.sampling import SAMPLING_RENDERER
    from glove_mcp.discovery.capability import MCP_PICKER

    assert (PICKER, SAMPLING) == (MCP_PICKER, SAMPLING_RENDERER)


SAMPLING_REQUEST = {
    "server": "docs",
    "model": "claude-x",
    "max_tokens": 100,
    "system_prompt": "Be brief.",
    "messages": [{"role": "user", "text": "summarise the page"}],
    "tools": [],
}


async def test_a_sampling_request_is_approved_or_refused_in_the_terminal() -> None:
    import asyncio
    import io

    from glove_core import DisplayManager
    from glove_mcp.cli.console_asks import ConsoleQuestions

    for typed, expected in ((["maybe\n", "y\n"], True), (["n\n"], False), ([""], False)):
        display = DisplayManager()
        out = io.StringIO()
        lines = iter(typed)
        stop = ConsoleQuestions(display, out, read_line=lines.__next__).attach()
        try:
            answer = await asyncio.wait_for(
                display.push_and_wait("mcp_sampling", SAMPLING_REQUEST), 10
            )
        finally:
            stop()
        assert answer is expected
        shown = out.getvalue()
        assert "[docs] asks to use the model (claude-x, up to 100 tokens)" in shown
        assert "user: summarise the page" in shown and "approve? y / n: " in shown


async def test_nobody_to_ask_refuses_sampling_at_once() -> None:
    import asyncio
    import io

    from glove_core import DisplayManager
    from glove_mcp.cli.console_asks import ConsoleQuestions

    display = DisplayManager()
    out = io.StringIO()

    def never() -> str:
        raise AssertionError("nothing is read without a terminal")

    stop = ConsoleQuestions(display, out, read_line=never, interactive=False).attach()
    try:
        answer = await asyncio.wait_for(display.push_and_wait("mcp_sampling", SAMPLING_REQUEST), 10)
    finally:
        stop()
    assert answer is False
    assert out.getvalue() == (
        "refused docs's sampling request: stdin is not a terminal, so nobody can answer\n"
    )
