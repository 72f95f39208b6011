"""``glove-mcp chat``: an agent in the terminal (``glove_mcp.cli.agent`` runs it)."""

from __future__ import annotations

from glove_mcp.cli.parser import catalogue_and_store, model_options, safety_flags, subcommand

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Coroutine
    from typing import Any

__all__ = ["NAME", "add_parser", "run"]

NAME = "chat"


def add_parser(commands: Any) -> None:
    """Add ``chat`` to the command's subparsers."""
    sub = subcommand(
        commands,
        NAME,
        "an interactive agent over the catalogue",
        "Talk to an agent that finds and activates catalogue servers as it needs them. "
        "Ctrl-C stops a reply; Ctrl-D or /quit leaves.",
        "  glove-mcp chat\n"
        "  glove-mcp chat --session chat-20260101-120000     resume a conversation\n"
        "  glove-mcp chat --script replies.json               offline, scripted replies\n",
    )
    sub.add_argument("--session", metavar="ID", help="resume a conversation")
    sub.add_argument(
        "--server-mode",
        action="store_true",
        help="never ask for permission or a choice (headless behaviour)",
    )
    catalogue_and_store(sub, shared=False)
    safety_flags(sub, agent=True)
    model_options(sub)
    sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    """The ``chat`` command."""
    from glove_mcp.cli.agent import chat

    return chat(args)
