"""``glove-mcp doctor``: where the command keeps things, and what is installed or missing.

It only looks (files, ``PATH``, importable packages); it changes nothing and contacts no
server, so it always exits 0.
"""

from __future__ import annotations

from glove_mcp.cli.parser import json_output, subcommand

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["NAME", "add_parser", "doctor", "report"]

NAME = "doctor"


def add_parser(commands: Any) -> None:
    """Add ``doctor`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "where things live, and what is installed or missing",
        "Print where the configuration (the catalogue), the data (tokens, conversations) and "
        "the databases live, and which optional parts are installed: Node (stdio servers "
        "started with npx), Chromium (the browser tests), PostgreSQL (serve --database), and "
        "the extras postgres, semantic and otel. It changes nothing and exits 0.",
        "  glove-mcp doctor\n  glove-mcp doctor --json\n",
    )
    json_output(sub)
    sub.set_defaults(handler=doctor, light=True)


def report() -> dict[str, Any]:
    """What ``doctor`` prints, as data: ``places`` (name to path and whether it exists) and
    ``parts`` (name to what was found, or None when missing, and what it is for)."""
    import os
    import shutil
    import sys

    from glove_mcp.cli.config import config_dir_name, data_dir_name, token_file_name
    from glove_mcp.cli.token_kind import DATABASE_ENV

    data = data_dir_name()
    # Not catalogue_file_name(): that moves an old catalogue, and doctor changes nothing.
    catalogue = os.path.join(config_dir_name(), "servers.toml")
    old = os.path.join(data, "servers.toml")
    places: dict[str, Any] = {
        "configuration": config_dir_name(),
        "catalogue": catalogue if os.path.exists(catalogue) else None,
    }
    if os.path.isfile(old) and os.path.abspath(old) != os.path.abspath(catalogue):
        places["old catalogue"] = old  # moved to the configuration folder on next use
    places |= {
        "data": data,
        "tokens (file store)": token_file_name(),
        "chat database": os.path.join(data, "chat.db"),
        "serve database": os.path.join(data, "server.db"),
        "serve --database": "$" + DATABASE_ENV if os.environ.get(DATABASE_ENV) else None,
    }
    found = {name: os.path.exists(path) for name, path in places.items() if path}
    parts: dict[str, Any] = {
        "python": (sys.version.split()[0], "glove runs on it"),
        "node": (_program("node", "--version"), "stdio servers started with npx"),
        "npx": (shutil.which("npx"), "stdio servers started with npx"),
        "chromium": (_chromium(), "the browser tests"),
        "postgresql": (_postgres(), "serve --database on this machine, its tests"),
        "extra: postgres": (_module("psycopg"), "serve --database (the postgres extra)"),
        "extra: semantic": (
            _module("sentence_transformers"),
            "discovery ranked by meaning (the semantic extra)",
        ),
        "extra: otel": (
            _module("opentelemetry"),
            "OpenTelemetry traces (the otel extra)",
        ),
    }
    return {"places": places, "exists": found, "parts": parts}


def doctor(args: argparse.Namespace) -> int:
    """Print ``report()``: places first, then installed and missing parts."""
    found = report()
    if args.json:
        import json

        parts = {
            name: {"found": value, "for": why} for name, (value, why) in found["parts"].items()
        }
        places = {
            name: {"path": path, "exists": found["exists"].get(name, False)}
            for name, path in found["places"].items()
        }
        print(json.dumps({"places": places, "parts": parts}, indent=2))
        return 0
    print("where things live:")
    for name, path in found["places"].items():
        if path is None:
            note = "not set" if name == "serve --database" else "none yet (built-in servers)"
            print(f"  {name:<22} {note}")
        else:
            there = "" if found["exists"].get(name) else "  (not created yet)"
            if name == "old catalogue":
                there = "  (moved to the configuration folder by the next command)"
            print(f"  {name:<22} {path}{there}")
    print("installed:")
    for name, (value, why) in found["parts"].items():
        shown = value if value is not None else "missing"
        print(f"  {name:<22} {shown:<40} {why}")
    return 0


def _program(name: str, *version: str) -> str | None:
    """``name``'s path and version (``--version``'s first line), or None if not on PATH."""
    import shutil
    import subprocess

    path = shutil.which(name)
    if path is None:
        return None
    try:
        out = subprocess.run(
            [path, *version], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return path
    return f"{path} ({out.splitlines()[0]})" if out else path


def _chromium() -> str | None:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _postgres() -> str | None:
    """The folder of ``initdb`` and ``postgres``: ``$GLOVE_POSTGRES_BIN``, Debian's
    ``/usr/lib/postgresql/<version>/bin``, or ``PATH`` (as the tests look for it)."""
    from glove_core.testing.postgres import find_postgres_bin

    return find_postgres_bin()


def _module(name: str) -> str | None:
    """The installed version of the distribution providing ``name``, or "installed", or None."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    from importlib.metadata import PackageNotFoundError, version

    distribution = {
        "sentence_transformers": "sentence-transformers",
        "opentelemetry": "opentelemetry-api",
    }
    try:
        return version(distribution.get(name, name))
    except PackageNotFoundError:
        return "installed"
