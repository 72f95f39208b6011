"""A running ``glove-mcp chat`` whose first message showed a FastMCP view, with its link:
shared by ``test_chat_web`` and the browser's ``test_web_chat_link``."""

from __future__ import annotations

import asyncio
import json
import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from glove_core import SqliteStore
from glove_mcp.adapter import SqliteMcpAdapter
from tests.glove_mcp.cli._commands import CLI, cli_env, write_catalogue

__all__ = ["LINK", "Chat", "running_chat"]

LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/#session=(s)&key=([A-Za-z0-9_-]{43})")


@dataclass
class Chat:
    """A running ``glove-mcp chat --debug`` whose first message showed a view."""

    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    out: list[str]
    home: Path
    base: str
    secret: str

    def read_until(self, pattern: str) -> str:
        """The next stdout line matching ``pattern`` (every line read is kept in ``out``)."""
        while True:
            line = self.lines.get(timeout=60)
            self.out.append(line)
            if re.search(pattern, line):
                return line

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def headers(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.secret}"}


@contextmanager
def running_chat(home: Path, url: str) -> Iterator[Chat]:
    """``glove-mcp chat --debug`` in ``home`` with the FastMCP server at ``url`` active, once
    its first message showed the view and its link; it leaves (end of input) afterwards."""
    catalogue = write_catalogue(home / "servers.toml", fm=url)
    db = home / "chat.db"
    # The server active in the conversation already, and its view tool allowed "always"
    # (stdin is a pipe: the terminal refuses every question it would ask).
    # In a thread of its own: the caller may run an event loop (Playwright's sync API does).
    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, _prepare(db)).result()
    replies = [{"tool_calls": [{"name": "fm__show_counter", "input": {}}]}, "Here it is."]
    (home / "script.json").write_text(json.dumps(replies), encoding="utf-8")
    args = [*("chat", "--session", "s", "--script", str(home / "script.json"))]
    args += [*("--catalogue", str(catalogue), "--db", str(db), "--debug")]
    args.append("--no-untrusted-marks")  # the result's text on its line, unwrapped
    with (home / "stderr.log").open("w") as errors:
        process = subprocess.Popen(
            [*CLI, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=cli_env(home),
        )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)

        pumping = threading.Thread(target=pump, daemon=True)
        pumping.start()
        running = Chat(process, lines, [], home, "", "")
        try:
            running.send("show me the counter")
            found = LINK.search(running.read_until(r"view of fm: "))
            assert found is not None, running.out
            running.base = f"http://127.0.0.1:{found.group(1)}"
            running.secret = found.group(3)
            running.read_until(r"agent: Here it is")
            yield running
        finally:
            if process.poll() is None:
                assert process.stdin is not None
                process.stdin.close()  # end of input: the chat leaves
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            pumping.join(10)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


async def _prepare(db: Path) -> None:
    adapter = SqliteMcpAdapter(db, "s")
    await adapter.activate("fm")
    await adapter.aclose()
    async with SqliteStore(db, "s") as store:
        await store.set_permission("fm__show_counter", "{}", "granted")
