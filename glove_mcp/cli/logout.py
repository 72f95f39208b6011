"""``glove-mcp logout ID``: revoke a server's tokens, then delete them
(``glove_mcp.cli.login`` does the work)."""

from __future__ import annotations

from glove_mcp.cli.parser import catalogue_and_store, safety_flags, subcommand, token_database

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Coroutine
    from typing import Any

__all__ = ["NAME", "add_parser", "run"]

NAME = "logout"


def add_parser(commands: Any) -> None:
    """Add ``logout`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "revoke a server's tokens at its authorization server, then delete them",
        "Revoke the server's tokens at its authorization server, then delete them here.",
        "  glove-mcp logout notion\n  glove-mcp logout notion --local-only\n",
    )
    sub.add_argument("id", help="the catalogue id")
    sub.add_argument(
        "--local-only",
        action="store_true",
        help="delete the stored tokens without revoking them (e.g. the server is gone)",
    )
    catalogue_and_store(sub)
    safety_flags(sub)
    token_database(sub)
    sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """The ``logout`` command."""
    from glove_mcp.cli.login import logout

    return logout(args)
