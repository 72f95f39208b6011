"""Words ``glove-mcp chat`` shows from its first prompt on, shared by the fast first prompt
(``_cli_chat_fast``) and the chat proper (``_cli_agent``); light to import."""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse

__all__ = ["NO_SERVERS", "PROMPT", "new_session_id", "resume_hint"]

PROMPT = "you> "  # _console.PROMPT, which the fast first prompt must not import
NO_SERVERS = "none (the agent finds servers as it needs them)"


def new_session_id() -> str:
    """A fresh conversation id: the time, so that ids sort as conversations began."""
    return time.strftime("chat-%Y%m%d-%H%M%S")


def resume_hint(args: argparse.Namespace, session: str) -> str:
    """The command that resumes conversation ``session`` with this run's flags."""
    from glove_mcp.cli.errors import command_hint

    hint = command_hint(args, "chat", "--session", session)
    if args.db:
        import shlex

        hint += f" --db {shlex.quote(args.db)}"
    return hint
