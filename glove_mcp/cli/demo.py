"""``glove-mcp demo``: the whole stack locally (``glove_mcp.cli.demo_stack`` runs it)."""

from __future__ import annotations

from glove_mcp.cli.parser import subcommand

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Coroutine
    from typing import Any

__all__ = ["NAME", "add_parser", "run"]

NAME = "demo"


def add_parser(commands: Any) -> None:
    """Add ``demo`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "run the whole stack locally: servers, OAuth, discovery, tools",
        "Start local MCP servers (one behind a local OAuth server), log in, and let an agent "
        "discover and use them. Offline with a scripted model unless ANTHROPIC_API_KEY is set. "
        "It uses its own servers: --catalogue is not read.",
        "  glove-mcp demo\n  glove-mcp demo --offline\n",
    )
    sub.add_argument(
        "--offline",
        action="store_true",
        help="use the scripted model even if ANTHROPIC_API_KEY is set",
    )
    sub.add_argument(
        "--no-interactive",
        action="store_true",
        help="with Claude, stop after the scripted question",
    )
    sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """The ``demo`` command."""
    from glove_mcp.cli.agent import demo

    return demo(args)
