"""The ``glove-mcp`` command: demo, login, status, chat and a headless server.

Errors print as one line (``--debug`` shows the traceback). Every subcommand has ``--help``.
This module only parses arguments: each command lives in a module of its own, imported when
it runs, so ``--help`` and ``status`` start as fast as the interpreter does (the ``mcp`` SDK
alone takes over a second to import).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from glove_mcp._cli_errors import CliError
from glove_mcp.errors import GloveMcpError

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence
    from typing import Any, TypeAlias

    Command: TypeAlias = Callable[[argparse.Namespace], Coroutine[Any, Any, int] | int]
    """A subcommand: a coroutine function, or a plain function where asyncio is not needed."""

__all__ = ["main"]

DEFAULT_MODEL = "claude-sonnet-4-5"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="glove-mcp",
        description="Agents that talk to MCP servers: try the demo, log in to servers, chat, "
        "or run a headless agent server.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser(
        "demo", help="run the whole stack locally: servers, OAuth, discovery, tools"
    )
    demo.add_argument(
        "--offline",
        action="store_true",
        help="use the scripted model even if ANTHROPIC_API_KEY is set",
    )
    demo.add_argument(
        "--no-interactive",
        action="store_true",
        help="with Claude, stop after the scripted question",
    )
    demo.set_defaults(run="_cli_agent:demo")

    def catalogue_and_store(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--catalogue",
            metavar="FILE",
            help="a TOML catalogue ([[servers]] id, name, description, url, tags); "
            "default: Notion and Linear",
        )
        sub.add_argument(
            "--store",
            choices=["file", "keyring"],
            default="file",
            help="where OAuth tokens live (default: a 0600 file in the data dir)",
        )

    auth = commands.add_parser("auth", help="log in to a catalogue server with OAuth")
    auth.add_argument("id", help="the catalogue id, e.g. notion")
    auth.add_argument(
        "--no-browser",
        action="store_true",
        help="print the URL and paste the redirect back (SSH, headless boxes)",
    )
    auth.add_argument("--port", type=int, default=53683, help="callback port (default 53683)")
    auth.add_argument("--timeout", type=float, default=300, help="seconds to wait for consent")
    auth.add_argument(
        "--client-id", metavar="ID", help="a client registered out of band (no registration)"
    )
    auth.add_argument(
        "--client-secret-env",
        metavar="NAME",
        help="environment variable holding that client's secret",
    )
    catalogue_and_store(auth)
    auth.set_defaults(run="_cli_login:auth")

    status = commands.add_parser("status", help="show which servers have tokens, and expiry")
    catalogue_and_store(status)
    status.set_defaults(run="_cli_status:status")

    logout = commands.add_parser(
        "logout", help="revoke a server's tokens at its authorization server, then delete them"
    )
    logout.add_argument("id", help="the catalogue id")
    logout.add_argument(
        "--local-only",
        action="store_true",
        help="delete the stored tokens without revoking them (e.g. the server is gone)",
    )
    catalogue_and_store(logout)
    logout.set_defaults(run="_cli_login:logout")

    def model_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--model",
            default=os.environ.get("GLOVE_MODEL", DEFAULT_MODEL),
            help=f"Claude model (default {DEFAULT_MODEL}; needs ANTHROPIC_API_KEY)",
        )
        sub.add_argument(
            "--script",
            metavar="FILE",
            help="offline: replies from a JSON script instead of a model",
        )
        sub.add_argument("--db", metavar="FILE", help="the SQLite file (default: in data dir)")

    chat = commands.add_parser("chat", help="an interactive agent over the catalogue")
    chat.add_argument("--session", metavar="ID", help="resume a conversation")
    chat.add_argument(
        "--server-mode",
        action="store_true",
        help="never ask for permission or a choice (headless behaviour)",
    )
    catalogue_and_store(chat)
    model_options(chat)
    chat.set_defaults(run="_cli_agent:chat")

    serve = commands.add_parser(
        "serve", help="a headless HTTP agent server (one agent per session)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    serve.add_argument(
        "--api-key-env",
        default="GLOVE_API_KEY",
        metavar="NAME",
        help="environment variable holding the clients' bearer key",
    )
    limits = serve.add_argument_group("limits")
    limits.add_argument(
        "--max-sessions",
        type=_at_least(1, int),
        metavar="N",
        help="sessions kept open at once; idle ones beyond are closed and reopened from the "
        "database on their next request (default: ulimit -n / 16, 4 to 1000)",
    )
    limits.add_argument(
        "--idle-timeout",
        type=_at_least(0, float),
        default=600.0,
        metavar="SECONDS",
        help="close a session idle this long; 0 never (default 600)",
    )
    limits.add_argument(
        "--max-connections",
        type=_at_least(1, int),
        metavar="N",
        help="open connections beyond which requests get 503 (default: half of ulimit -n, "
        "at most 1000)",
    )
    limits.add_argument(
        "--header-timeout",
        type=_at_least(0, float, strict=True),
        default=10.0,
        metavar="SECONDS",
        help="time a connection has to send a request's headers, then 408 (default 10)",
    )
    limits.add_argument(
        "--body-timeout",
        type=_at_least(0, float, strict=True),
        default=30.0,
        metavar="SECONDS",
        help="time a request body may take to arrive, then 408 (default 30)",
    )
    limits.add_argument(
        "--keep-alive",
        type=_at_least(1, int),
        default=5,
        metavar="SECONDS",
        help="how long an idle keep-alive connection stays open (default 5)",
    )
    database = serve.add_argument_group("several instances (PostgreSQL; needs the postgres extra)")
    database.add_argument(
        "--database",
        metavar="URL",
        default=os.environ.get("GLOVE_DATABASE_URL"),
        help="keep sessions, events, MCP state in PostgreSQL (postgresql://user:pw@host/db; "
        "default $GLOVE_DATABASE_URL) so several instances behind a load balancer serve any "
        "session; instead of --db",
    )
    database.add_argument(
        "--database-pool-min",
        type=_at_least(0, int),
        default=1,
        metavar="N",
        help="pooled database connections kept open (default 1)",
    )
    database.add_argument(
        "--database-pool-max",
        type=_at_least(1, int),
        default=10,
        metavar="N",
        help="most pooled database connections at once (default 10)",
    )
    database.add_argument(
        "--database-timeout",
        type=_at_least(0, float, strict=True),
        default=30.0,
        metavar="SECONDS",
        help="wait this long for a free pooled connection, or to connect at start (default 30)",
    )
    database.add_argument(
        "--database-max-locks",
        type=_at_least(1, int),
        default=100,
        metavar="N",
        help="most turns running at once on this instance; each holds a database connection "
        "for its conversation's lock (default 100)",
    )
    catalogue_and_store(serve)
    model_options(serve)
    serve.set_defaults(run="_cli_agent:serve")
    return parser


def _at_least(low: float, kind: type[int] | type[float], *, strict: bool = False) -> Any:
    """An argparse ``type=`` that parses ``kind`` and refuses values under ``low`` (or equal to
    it, when ``strict``), so a bad limit is named by its flag."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value < low or (strict and value == low):
            word = "more than" if strict else "at least"
            raise argparse.ArgumentTypeError(f"must be {word} {low:g}, got {text}")
        return value

    return parse


def _run(where: str, args: argparse.Namespace) -> int:
    module, name = where.split(":")
    command: Command = getattr(importlib.import_module(f"glove_mcp.{module}"), name)
    if args.debug or module != "_cli_status":
        _log_to_terminal(args.debug)
    outcome = command(args)
    if isinstance(outcome, int):
        return outcome
    import asyncio

    return asyncio.run(outcome)


def _log_to_terminal(debug: bool) -> None:
    # Imported here: ``--help`` and ``status`` print nothing through logging.
    import logging

    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not debug:
        # The SDK logs its own failures with tracebacks (an OAuth flow error, a server's
        # unreadable answer) before raising them; glove turns them into one line, so the
        # terminal shows that line only.
        logging.getLogger("mcp").setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``glove-mcp`` console script."""
    args = _parser().parse_args(argv)
    try:
        return _run(args.run, args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        # Imported only now: glove_core is not needed to parse arguments or to print help.
        from glove_core.errors import GloveError

        if isinstance(exc, CliError | GloveError | GloveMcpError):
            print(f"glove-mcp: {exc}", file=sys.stderr)
            return exc.status if isinstance(exc, CliError) else 1
        print(
            f"glove-mcp: unexpected {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
