"""The corpus of published MCP servers the real-server tests mount, as users run them.

Every server is pinned and installed by ``tests/realservers/install.sh``: the npm packages
from ``package-lock.json`` into ``node_modules`` (Node 22 with them), the Python servers into
one virtualenv per group from the pinned ``requirements/<group>.txt`` (``VENVS``).
Nothing is fetched when the tests run.

Outbound traffic is blocked: each stdio server runs in a network namespace of its own with only
loopback (``unshare --net``, as root), and every server gets ``HTTP(S)_PROXY`` pointing at a
closed port on 127.0.0.1, so a cloud call (Notion, Linear with a dummy token) fails at once,
on this machine. Without a network namespace, tests that would make a cloud call are skipped.

Without the install, the modules using this are skipped, unless ``GLOVE_REQUIRE_INTEROP=1``,
which makes a missing install a failure.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from glove_mcp import McpCatalogueEntry

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node_modules"
NODE = NODE_MODULES / "node" / "bin" / "node"
VENVS = HERE.parent.parent / ".realservers" / "venvs"
"""The Python servers' virtualenvs, one per group (outside ``tests/``: see ``install.sh``)."""
LOOPBACK = HERE.parent / "interop" / "loopback.cjs"
"""Preloaded into Node servers started over HTTP: binds 127.0.0.1 only, reports the port."""

CLOSED_PROXY = "http://127.0.0.1:9"
"""Nothing listens on the discard port: a proxied request is refused at once, locally."""

BLOCKED_ENV = {
    "HTTP_PROXY": CLOSED_PROXY,
    "HTTPS_PROXY": CLOSED_PROXY,
    "ALL_PROXY": CLOSED_PROXY,
    "http_proxy": CLOSED_PROXY,
    "https_proxy": CLOSED_PROXY,
    "all_proxy": CLOSED_PROXY,
    "NO_PROXY": "",
    "no_proxy": "",
    # Node's own fetch honours the variables above only when told to (Node 22.21 and later).
    "NODE_USE_ENV_PROXY": "1",
    # Python servers: no byte-code files written into the installed environments.
    "PYTHONDONTWRITEBYTECODE": "1",
}
"""Environment of every corpus server: outbound HTTP goes to a closed local port."""

DUMMY_NOTION_TOKEN = "ntn_glove_dummy_token_0000000000000000000000000000"
DUMMY_LINEAR_TOKEN = "lin_api_glove_dummy_token_000000000000000000000000"


@functools.cache
def network_namespace() -> bool:
    """Whether a process can be started in a network namespace with only loopback (root, or
    unprivileged user namespaces, and ``unshare`` and ``ip`` installed)."""
    try:
        done = subprocess.run(
            ["unshare", "--net", "--", "sh", "-c", "ip link set lo up"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def offline(command: Sequence[str]) -> list[str]:
    """``command`` run in a network namespace with only loopback up, when one can be made."""
    if not network_namespace():
        return list(command)
    script = 'ip link set lo up && exec "$@"'
    return ["unshare", "--net", "--", "sh", "-c", script, "sh", *command]


def require_offline() -> None:
    """Skip (or fail, under ``GLOVE_REQUIRE_INTEROP=1``) a test that makes a cloud call when
    no network namespace keeps it on this machine."""
    if not network_namespace():
        _missing("no network namespace can be made (unshare --net, as root): cloud calls")


def _missing(why: str) -> None:
    if os.environ.get("GLOVE_REQUIRE_INTEROP") == "1":
        pytest.fail(f"GLOVE_REQUIRE_INTEROP=1, but {why}", pytrace=False)
    pytest.skip(why)


@dataclass(frozen=True)
class Server:
    """One published server of the corpus.

    Attributes:
        id: the catalogue id (the tool namespace).
        package: the package as published (npm or PyPI name).
        version: the version pinned.
        command: how it starts, after the interpreter: a script under ``node_modules`` for
            npm packages, a console script of the group's virtualenv for Python ones.
        group: the virtualenv of a Python server (None: an npm package run by Node).
        env: its environment, beside ``BLOCKED_ENV``.
    """

    id: str
    package: str
    version: str
    command: tuple[str, ...]
    group: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def program(self) -> Path:
        """The installed file that starts it."""
        if self.group is None:
            return NODE_MODULES / self.command[0]
        return VENVS / self.group / "bin" / self.command[0]

    def argv(self, *extra: str) -> list[str]:
        """The full command line, with ``extra`` arguments appended."""
        if self.group is None:
            return [str(NODE), str(self.program), *self.command[1:], *extra]
        return [str(self.program), *self.command[1:], *extra]

    def require(self) -> None:
        """Skip (or fail) when the server or its interpreter is not installed."""
        needed = [self.program] + ([NODE] if self.group is None else [])
        absent = [str(p) for p in needed if not p.exists()]
        if absent:
            _missing(
                f"{self.package} {self.version} is not installed (missing: "
                f"{', '.join(absent)}): run tests/realservers/install.sh"
            )

    def entry(self, *extra: str, env: dict[str, str] | None = None) -> McpCatalogueEntry:
        """The catalogue entry that starts it over stdio, offline."""
        self.require()
        return McpCatalogueEntry(
            id=self.id,
            name=self.package,
            description=f"{self.package} {self.version}",
            command=offline(self.argv(*extra)),
            env={**BLOCKED_ENV, **self.env, **(env or {})},
        )


_NPM = "@modelcontextprotocol"

NOTION = Server(
    "notion",
    "@notionhq/notion-mcp-server",
    "2.5.2",
    ("@notionhq/notion-mcp-server/bin/cli.mjs",),
    env={"NOTION_TOKEN": DUMMY_NOTION_TOKEN},
)
LINEAR = Server(
    "linear",
    "@tacticlaunch/mcp-linear",
    "1.4.3",
    ("@tacticlaunch/mcp-linear/dist/index.js",),
    env={"LINEAR_API_TOKEN": DUMMY_LINEAR_TOKEN},
)
FILESYSTEM = Server(
    "filesystem",
    f"{_NPM}/server-filesystem",
    "2026.8.31",
    (f"{_NPM}/server-filesystem/dist/index.js",),
)
MEMORY = Server(
    "memory", f"{_NPM}/server-memory", "2026.8.31", (f"{_NPM}/server-memory/dist/index.js",)
)
THINKING = Server(
    "thinking",
    f"{_NPM}/server-sequential-thinking",
    "2026.8.31",
    (f"{_NPM}/server-sequential-thinking/dist/index.js",),
)
EVERYTHING = Server(
    "everything",
    f"{_NPM}/server-everything",
    "2026.8.31",
    (f"{_NPM}/server-everything/dist/index.js", "stdio"),
)
PDF = Server("pdf", f"{_NPM}/server-pdf", "2.0.4", (f"{_NPM}/server-pdf/dist/index.js", "--stdio"))
PLAYWRIGHT = Server("playwright", "@playwright/mcp", "0.0.83", ("@playwright/mcp/cli.js",))
GIT = Server("git", "mcp-server-git", "2026.10.19", ("mcp-server-git",), group="reference")
TIME = Server(
    "time",
    "mcp-server-time",
    "2026.10.19",
    ("mcp-server-time", "--local-timezone", "UTC"),
    group="reference",
)
FETCH = Server("fetch", "mcp-server-fetch", "2026.10.24", ("mcp-server-fetch",), group="reference")
SQLITE = Server("sqlite", "mcp-server-sqlite", "2025.4.25", ("mcp-server-sqlite",), group="sqlite")
EXCEL = Server("excel", "excel-mcp-server", "2.2.2", ("excel-mcp-server", "stdio"), group="office")
WORD = Server("word", "office-word-mcp-server", "1.1.11", ("word_mcp_server",), group="office")

CORPUS = (
    NOTION,
    LINEAR,
    FILESYSTEM,
    MEMORY,
    THINKING,
    EVERYTHING,
    PDF,
    PLAYWRIGHT,
    GIT,
    TIME,
    FETCH,
    SQLITE,
    EXCEL,
    WORD,
)
"""Every server tested, in the order of ``docs/tested-servers.md``."""
