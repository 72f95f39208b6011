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
from os import _exit as exit_now  # documented: leave without running cleanup handlers

from glove_mcp._cli_args import Formatter as _Formatter
from glove_mcp._cli_args import Version as _Version
from glove_mcp._cli_args import at_least as _at_least
from glove_mcp._cli_args import port as _port
from glove_mcp._cli_args import subcommand as _subcommand

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import signal as _signal
else:
    # The C module behind ``signal`` (already loaded by the interpreter): the wrapper's enums
    # cost start-up time, and only SIGINT's handler is set here.
    import _signal
if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence
    from typing import Any, TypeAlias

    Command: TypeAlias = Callable[[argparse.Namespace], Coroutine[Any, Any, int] | int]
    """A subcommand: a coroutine function, or a plain function where asyncio is not needed."""

__all__ = ["main"]

DEFAULT_MODEL = "claude-sonnet-4-5"


def _parser(wanted: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; with ``wanted``, only that command's arguments are built."""
    parser = argparse.ArgumentParser(
        prog="glove-mcp",
        description="Agents that talk to MCP servers: try the demo, log in to servers, chat, "
        "or run a headless agent server.",
        epilog="examples:\n"
        "  glove-mcp demo                   the whole stack locally, no keys needed\n"
        "  glove-mcp servers list           the catalogue\n"
        "  glove-mcp auth notion            log in to a server (a browser opens)\n"
        "  glove-mcp chat                   talk to an agent (needs ANTHROPIC_API_KEY)\n"
        "\n`glove-mcp COMMAND --help` describes each command. NO_COLOR=1 turns colours off.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.wanted = wanted  # type: ignore[attr-defined]

    demo = _subcommand(
        commands,
        "demo",
        "run the whole stack locally: servers, OAuth, discovery, tools",
        "Start local MCP servers (one behind a local OAuth server), log in, and let an agent "
        "discover and use them. Offline with a scripted model unless ANTHROPIC_API_KEY is set.",
        "  glove-mcp demo\n  glove-mcp demo --offline\n",
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

    def catalogue_and_store(sub: argparse.ArgumentParser, *, shared: bool = True) -> None:
        sub.add_argument(
            "--catalogue",
            metavar="FILE",
            help="a TOML catalogue ([[servers]] id, name, description, url or command, tags); "
            "default: $GLOVE_HOME/servers.toml if it exists, else Notion and Linear",
        )
        sub.add_argument(
            "--store",
            choices=["file", "keyring"],
            default=None,
            help="where OAuth tokens live: a 0600 file in the data dir, or the OS keyring "
            "(default: the --database when there is one, else file)"
            if shared
            else "where OAuth tokens live: a 0600 file in the data dir (default), or the OS "
            "keyring",
        )

    def token_database(sub: argparse.ArgumentParser) -> None:
        group = sub.add_argument_group("tokens shared by several serve instances (PostgreSQL)")
        group.add_argument(
            "--database",
            metavar="URL",
            help="keep the OAuth tokens in the PostgreSQL database that `glove-mcp serve "
            "--database URL` uses (default $GLOVE_DATABASE_URL); instead of --store",
        )
        group.add_argument(
            "--database-timeout",
            type=_at_least(0, float, strict=True),
            default=30.0,
            metavar="SECONDS",
            help="how long to wait for the database to answer (default 30)",
        )

    def json_output(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--json", action="store_true", help="print JSON instead of text")

    auth = _subcommand(
        commands,
        "auth",
        "log in to a catalogue server with OAuth",
        "Log in to one catalogue server with OAuth and keep its tokens. Servers that need no "
        "login (open HTTP servers, stdio servers) are recognised and nothing is saved.",
        "  glove-mcp auth notion\n"
        "  glove-mcp auth notion --no-browser          over SSH: paste the redirect back\n"
        "  glove-mcp auth tracker --catalogue servers.toml --port 0\n",
    )
    auth.add_argument("id", help="the catalogue id, e.g. notion")
    auth.add_argument(
        "--no-browser",
        action="store_true",
        help="print the URL and paste the redirect back (SSH, headless boxes)",
    )
    auth.add_argument("--port", type=_port, default=53683, help="callback port; 0 picks a free one")
    auth.add_argument(
        "--timeout",
        type=_at_least(0, float, strict=True),
        default=300,
        metavar="SECONDS",
        help="how long to wait for consent",
    )
    auth.add_argument(
        "--client-id", metavar="ID", help="a client registered out of band (no registration)"
    )
    auth.add_argument(
        "--client-secret-env",
        metavar="NAME",
        help="environment variable holding that client's secret",
    )
    catalogue_and_store(auth)
    token_database(auth)
    auth.set_defaults(run="_cli_login:auth")

    status = _subcommand(
        commands,
        "status",
        "show which servers have tokens, and expiry",
        "One line per catalogue server: logged in (and when the token expires), no tokens, "
        "or no login needed (stdio servers). --check also asks each server.",
        "  glove-mcp status\n  glove-mcp status --check\n  glove-mcp status --json\n",
    )
    status.add_argument(
        "--check",
        action="store_true",
        help="ask each HTTP server without tokens whether it is open, needs a login, or is down",
    )
    catalogue_and_store(status)
    token_database(status)
    json_output(status)
    status.set_defaults(run="_cli_status:status")

    logout = _subcommand(
        commands,
        "logout",
        "revoke a server's tokens at its authorization server, then delete them",
        "Revoke the server's tokens at its authorization server, then delete them here.",
        "  glove-mcp logout notion\n  glove-mcp logout notion --local-only\n",
    )
    logout.add_argument("id", help="the catalogue id")
    logout.add_argument(
        "--local-only",
        action="store_true",
        help="delete the stored tokens without revoking them (e.g. the server is gone)",
    )
    catalogue_and_store(logout)
    token_database(logout)
    logout.set_defaults(run="_cli_login:logout")

    servers = _subcommand(
        commands,
        "servers",
        "list, add and remove catalogue servers",
        "The catalogue: the MCP servers the agent may use. `add` and `remove` edit the "
        "--catalogue file (default $GLOVE_HOME/servers.toml, created from the built-in "
        "servers on first use), keeping its comments.",
        "  glove-mcp servers list\n"
        "  glove-mcp servers add docs https://docs.example.com/mcp --description 'Our docs'\n"
        "  glove-mcp servers add files --description 'Local files' -- \\\n"
        "      npx -y @modelcontextprotocol/server-filesystem /tmp\n"
        "  glove-mcp servers remove docs\n",
    )
    servers_commands = servers.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = servers_commands.add_parser(
        "list", help="the catalogue's servers", formatter_class=_Formatter
    )
    listing.add_argument("--catalogue", metavar="FILE", help="the catalogue file")
    json_output(listing)
    listing.set_defaults(run="_cli_servers:list_servers")
    adding = servers_commands.add_parser(
        "add",
        help="add a server: a URL, or a command after --",
        usage="glove-mcp servers add ID (URL | -- COMMAND [ARG ...]) [options]",
        formatter_class=_Formatter,
        description="Add a Streamable HTTP server by URL, or a stdio server by the command "
        "that starts it (after --).",
    )
    adding.add_argument("id", help="the catalogue id (letters, digits, - and _)")
    adding.add_argument("url", nargs="?", metavar="URL", help="a Streamable HTTP endpoint")
    adding.add_argument("--name", help="a human name (default: the id)")
    adding.add_argument("--description", help="what the server can do (discovery ranks on it)")
    adding.add_argument(
        "--tag", action="append", default=[], metavar="TAG", help="a keyword (repeatable)"
    )
    adding.add_argument("--catalogue", metavar="FILE", help="the catalogue file to edit")
    adding.set_defaults(run="_cli_servers:add_server", command_line=None)
    removing = servers_commands.add_parser(
        "remove", help="remove a server", formatter_class=_Formatter
    )
    removing.add_argument("id", help="the catalogue id")
    removing.add_argument("--catalogue", metavar="FILE", help="the catalogue file to edit")
    removing.set_defaults(run="_cli_servers:remove_server")

    def model_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--model",
            default=os.environ.get("GLOVE_MODEL", DEFAULT_MODEL),
            help=f"Claude model (default {DEFAULT_MODEL}, or $GLOVE_MODEL; needs "
            "ANTHROPIC_API_KEY)",
        )
        sub.add_argument(
            "--script",
            metavar="FILE",
            help="offline: replies from a JSON script instead of a model (see the README)",
        )
        sub.add_argument(
            "--db", metavar="FILE", help="the SQLite file (default: in the data dir, 0600)"
        )

    chat = _subcommand(
        commands,
        "chat",
        "an interactive agent over the catalogue",
        "Talk to an agent that finds and activates catalogue servers as it needs them. "
        "Ctrl-C stops a reply; Ctrl-D or /quit leaves; /help lists the chat's commands.",
        "  glove-mcp chat\n"
        "  glove-mcp chat --continue                       resume the last conversation\n"
        "  glove-mcp chat --session chat-20260101-120000   resume a conversation\n"
        "  glove-mcp chat --session standup --new          start one with that id\n"
        "  git diff | glove-mcp chat -p 'review this'      print one answer and exit\n"
        "  glove-mcp chat --script replies.json            offline, scripted replies\n",
    )
    chat.add_argument("--session", metavar="ID", help="resume a saved conversation")
    chat.add_argument("--new", action="store_true", help="with --session ID: start one of that id")
    chat.add_argument(
        "-c", "--continue", dest="cont", action="store_true", help="resume the last conversation"
    )
    chat.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        help="send PROMPT (piped stdin appended as context), print the answer, exit (non-zero "
        "status on failure)",
    )
    chat.add_argument(
        "--server-mode",
        action="store_true",
        help="never ask for permission or a choice (headless behaviour)",
    )
    catalogue_and_store(chat, shared=False)
    model_options(chat)
    chat.set_defaults(run="_cli_chat_fast:chat")

    serve = _subcommand(
        commands,
        "serve",
        "a headless HTTP agent server (one agent per session)",
        "Serve agents over HTTP: POST /sessions, then POST /sessions/ID/messages. Clients "
        "send the key from --api-key-env as a bearer token. With --database, OAuth tokens "
        "and client registrations live in that database too, shared by every instance "
        "(log in with `glove-mcp auth ID --database URL`); an explicit --store file|keyring "
        "keeps them on this machine instead.",
        "  GLOVE_API_KEY=secret glove-mcp serve --port 8765\n"
        "  GLOVE_API_KEY=secret glove-mcp serve --script replies.json --port 0\n"
        "  glove-mcp auth notion --database postgresql://glove@db/glove --no-browser\n"
        "  GLOVE_API_KEY=secret glove-mcp serve --database postgresql://glove@db/glove\n",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=8765, help="0 picks a free port")
    serve.add_argument(
        "--api-key-env",
        default="GLOVE_API_KEY",
        metavar="NAME",
        help="environment variable holding the clients' bearer key",
    )
    serve.add_argument(
        "--web",
        action="store_true",
        help="also serve a chat page at / (it asks for the same key); the agent then asks the "
        "page for permissions and what MCP servers want to know",
    )
    serve.add_argument(
        "--access-log", action="store_true", help="log one line per request to stderr"
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
        help="keep sessions, events, MCP state and, unless --store is given, OAuth tokens in "
        "PostgreSQL (postgresql://user:pw@host/db; default $GLOVE_DATABASE_URL) so several "
        "instances behind a load balancer serve any session and refresh each token once; "
        "log in with `glove-mcp auth ID --database URL`; instead of --db",
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


def _run(where: str, args: argparse.Namespace) -> int:
    module, name = where.split(":")
    if module in _QUIET_MODULES:
        command: Command = getattr(importlib.import_module(f"glove_mcp.{module}"), name)
    else:
        # The other commands load the MCP SDK, pydantic and more (a second or two): on a
        # terminal, show that something is happening meanwhile.
        from glove_mcp._cli_progress import Progress

        starting = Progress(sys.stderr)
        try:
            with starting.step("starting…"):
                command = getattr(importlib.import_module(f"glove_mcp.{module}"), name)
        finally:
            starting.close()
    if args.debug or module not in _QUIET_MODULES:
        _log_to_terminal(args)
    outcome = command(args)
    if isinstance(outcome, int):
        return outcome
    import asyncio

    # From here asyncio turns Ctrl-C into cancelling the command, which then cleans up
    # (a half-done login is undone) before KeyboardInterrupt reaches ``main``.
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    return asyncio.run(outcome)


# Commands that print nothing through logging: not paying for its import keeps them fast.
_QUIET_MODULES = frozenset({"_cli_status", "_cli_servers"})


def _log_to_terminal(args: argparse.Namespace) -> None:
    # Imported here: ``--help`` and ``status`` print nothing through logging.
    from glove_mcp._cli_log import log_to_terminal

    log_to_terminal(args)


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C before a command has started: nothing to clean up yet, so leave at once with one
    line (a KeyboardInterrupt raised inside an import can be swallowed as "Exception
    ignored" and print a traceback instead)."""
    os.write(2, b"\ninterrupted\n")
    exit_now(130)


def _parse(argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; what follows ``--`` is the command line of ``servers add``, passed
    through untouched (its own options included)."""
    # The first word that is no option is the command (the global options take no value).
    parser = _parser(next((word for word in argv if not word.startswith("-")), None))
    command_line = None
    if "--" in argv:
        cut = argv.index("--")
        argv, command_line = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if command_line is not None:
        if args.run != "_cli_servers:add_server":
            parser.error("`--` is for `glove-mcp servers add ID -- COMMAND ...` only")
        args.command_line = command_line
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``glove-mcp`` console script."""
    interactive = _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
    if interactive:
        _signal.signal(_signal.SIGINT, _interrupted)
    try:
        args = _parse(list(sys.argv[1:] if argv is None else argv))
        return _run(args.run, args)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``glove-mcp servers list | head``): stop quietly, as a
        # command killed by SIGPIPE would, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:
        if args.debug:
            raise
        from glove_mcp._cli_errors import terminal_message

        message, status = terminal_message(exc, args)
        print(f"glove-mcp: {message}", file=sys.stderr)
        return status
    finally:
        if interactive:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)


if __name__ == "__main__":
    sys.exit(main())
