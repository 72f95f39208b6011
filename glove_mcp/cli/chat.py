"""``glove-mcp chat``: an agent in the terminal (``glove_mcp.cli.agent`` runs it)."""

from __future__ import annotations

from glove_mcp.cli.parser import catalogue_and_store, model_options, safety_flags, subcommand

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
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
        "Ctrl-C stops a reply; Ctrl-D or /quit leaves; /help lists the chat's commands.",
        "  glove-mcp chat\n"
        "  glove-mcp chat --continue                       resume the last conversation\n"
        "  glove-mcp chat --session chat-20260101-120000   resume a conversation\n"
        "  glove-mcp chat --session standup --new          start one with that id\n"
        "  git diff | glove-mcp chat -p 'review this'      print one answer and exit\n"
        "  glove-mcp chat --script replies.json            offline, scripted replies\n",
    )
    sub.add_argument("--session", metavar="ID", help="resume a saved conversation")
    sub.add_argument("--new", action="store_true", help="with --session ID: start one of that id")
    sub.add_argument(
        "-c", "--continue", dest="cont", action="store_true", help="resume the last conversation"
    )
    sub.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        help="send PROMPT (piped stdin appended as context), print the answer, exit (non-zero "
        "status on failure)",
    )
    sub.add_argument(
        "--server-mode",
        action="store_true",
        help="never ask for permission or a choice (headless behaviour)",
    )
    catalogue_and_store(sub, shared=False)
    safety_flags(sub, agent=True)
    model_options(sub)
    sub.set_defaults(handler=run, own_start=True)


def run(args: argparse.Namespace) -> int:
    """The ``chat`` command: the first prompt comes before the heavy imports
    (``chat_fast``)."""
    from glove_mcp.cli.chat_fast import chat

    return chat(args)
