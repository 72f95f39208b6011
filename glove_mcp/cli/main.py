"""The ``glove-mcp`` command's entry point: it builds the parser from the commands' modules,
parses, and runs the handler the command named.

Errors print as one line (``--debug`` shows the traceback). Every command has ``--help``.
The commands' modules are light to import (their heavy imports sit inside their handlers),
and when the command line names a command only that command's module is imported and only
its parser built, so ``--help`` and ``status`` start about as fast as the interpreter does
(the ``mcp`` SDK alone takes over a second to import).

Exit statuses: 0 done; 1 the command failed (or, for ``status --check``, something needs
attention); 2 a usage or configuration mistake (a bad flag, a broken catalogue; also no
command at all, after printing the help); 130 interrupted; 141 the reader of the output went
away.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from os import _exit as exit_now  # documented: leave without running cleanup handlers

from glove_mcp.cli.parser import Formatter, Parser, Version, global_options

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    import signal as _signal
    from collections.abc import Sequence
    from types import ModuleType
else:
    # The C module behind ``signal`` (already loaded by the interpreter): the wrapper's enums
    # cost start-up time, and only SIGINT's handler is set here.
    import _signal

__all__ = ["COMMANDS", "build_parser", "command_module", "main", "parse"]

COMMANDS = ("demo", "auth", "status", "logout", "servers", "chat", "serve", "doctor", "completion")
"""The commands, in the order the help lists them. Each is the module of that name in this
package, with ``NAME`` and ``add_parser(commands)``, which adds the command's parser and
names its handler (a function: the parsed arguments carry the handler itself)."""


def command_module(name: str) -> ModuleType:
    """The module of command ``name`` (one of ``COMMANDS``), imported on first use: a run
    imports only the command it runs."""
    if name not in COMMANDS:
        raise ValueError(f"no command {name!r}")
    return import_module(f"{__package__}.{name}")


def build_parser(wanted: str | None = None) -> Parser:
    """The command's parser; with ``wanted``, only that command's arguments are built."""
    parser = Parser(
        prog="glove-mcp",
        description="Agents that talk to MCP servers: try the demo, log in to servers, chat, "
        "or run a headless agent server.",
        epilog="examples:\n"
        "  glove-mcp demo                   the whole stack locally, no keys needed\n"
        "  glove-mcp servers list           the catalogue\n"
        "  glove-mcp auth notion            log in to a server (a browser opens)\n"
        "  glove-mcp chat                   talk to an agent (needs ANTHROPIC_API_KEY)\n"
        "  glove-mcp doctor                 where things live, what is installed\n"
        "\n`glove-mcp COMMAND --help` describes each command; --debug and --catalogue FILE\n"
        "go before or after it. NO_COLOR=1 turns colours off.\n"
        "\nexit status: 0 done; 1 failed (status --check: something needs attention);\n"
        "2 a usage or configuration mistake (also: no command given, after this help).",
        formatter_class=Formatter,
    )
    parser.add_argument("-V", "--version", action=Version, help="print the version and exit")
    global_options(parser, top=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS if wanted is None else (wanted,):
        command_module(name).add_parser(commands)
    # For ``completion``, which describes every command: given, not imported (no cycle).
    parser.set_defaults(build_parser=build_parser)
    return parser


def _wanted(argv: Sequence[str]) -> str | None:
    """The command this run uses: the first word that names one (the value of a global
    ``--catalogue`` is skipped), or None (then every command's parser is built)."""
    names = set(COMMANDS)
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--catalogue":
            skip = True
        elif word == "--":
            return None
        elif not word.startswith("-"):
            return word if word in names else None
    return None


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; what follows ``--`` is the command line of ``servers add``, passed
    through untouched (its own options included)."""
    argv = list(argv)
    if not argv:
        # Bare: the help (the commands and examples) and status 2, as for any usage mistake,
        # so that a script that forgot its command does not pass.
        build_parser().print_help(sys.stderr)
        raise SystemExit(2)
    parser = build_parser(_wanted(argv))
    command_line = None
    if "--" in argv:
        cut = argv.index("--")
        argv, command_line = argv[:cut], argv[cut + 1 :]
    args, extras = parser.parse_known_args(argv)
    if extras:
        args.command_parser.unknown_flags(extras)
    if command_line is not None:
        if not getattr(args, "takes_command_line", False):
            parser.error("`--` is for `glove-mcp servers add ID -- COMMAND ...` only")
        args.command_line = command_line
    return args


def _run(args: argparse.Namespace) -> int:
    if getattr(args, "light", False):
        if args.debug:
            _log_to_terminal(args)
        outcome = args.handler(args)
    elif getattr(args, "own_start", False):
        # ``chat`` shows its prompt before the heavy imports and says what it is doing itself.
        _log_to_terminal(args)
        outcome = args.handler(args)
    else:
        # The other commands load the MCP SDK, pydantic and more (a second or two) when their
        # handler is called: on a terminal, show that something is happening meanwhile.
        from glove_mcp.cli.progress import Progress

        _log_to_terminal(args)
        starting = Progress(sys.stderr)
        try:
            with starting.step("starting…"):
                outcome = args.handler(args)
        finally:
            starting.close()
    if isinstance(outcome, int):
        return outcome
    import asyncio

    # From here asyncio turns Ctrl-C into cancelling the command, which then cleans up
    # (a half-done login is undone) before KeyboardInterrupt reaches ``main``.
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    result: int = asyncio.run(outcome)
    return result


def _log_to_terminal(args: argparse.Namespace) -> None:
    # Imported here: ``--help`` and ``status`` print nothing through logging.
    from glove_mcp.cli.log import log_to_terminal

    log_to_terminal(args)


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C before a command has started: nothing to clean up yet, so leave at once with one
    line (a KeyboardInterrupt raised inside an import can be swallowed as "Exception
    ignored" and print a traceback instead)."""
    os.write(2, b"\ninterrupted\n")
    exit_now(130)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``glove-mcp`` console script."""
    interactive = _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
    if interactive:
        _signal.signal(_signal.SIGINT, _interrupted)
    args = None
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
        return _run(args)
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
        if args is None or args.debug:
            raise
        from glove_mcp.cli.errors import terminal_message

        message, code = terminal_message(exc, args)
        print(f"glove-mcp: {message}", file=sys.stderr)
        return code
    finally:
        if interactive:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)


if __name__ == "__main__":
    sys.exit(main())
