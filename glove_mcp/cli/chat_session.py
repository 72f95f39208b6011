"""``glove-mcp chat``'s conversations and slash commands: which conversation a run opens
(``--session``, ``--new``, ``--continue``), and ``/help``, ``/clear``, ``/servers``,
``/sessions`` (``/prompts`` and ``/prompt`` live in ``_cli_prompts``, ``/web`` in
``chat_web``). Slash commands are
answered here and never sent to the model; an unknown one says so.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TextIO

from glove_core import SqliteStore
from glove_core.errors import StoreNotFoundError
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.cli.chat_names import new_session_id
from glove_mcp.cli.console import plain, shorten
from glove_mcp.cli.errors import CliError, command_hint
from glove_mcp.oauth import OAuthStore

__all__ = [
    "HELP",
    "NewConversation",
    "choose_session",
    "list_servers",
    "list_sessions",
    "new_session_id",
    "saved_ids",
]

HELP = """\
/help                 this list
/clear                start a fresh conversation (this one is kept; its id is printed)
/servers              the catalogue: which servers are active and which are logged in
/sessions             saved conversations, newest last (resume: glove-mcp chat --session ID)
/prompts              the active servers' prompts
/prompt S NAME [k=v]  send server S's prompt NAME, filled in
/web                  open this conversation in the browser (where servers' views show)
/quit                 leave (or Ctrl-D); Ctrl-C stops a reply
Anything else goes to the agent."""


class NewConversation(Exception):
    """``/clear``: the chat ends this conversation and opens ``session_id``."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(session_id)


async def saved_ids(db: Path) -> list[str]:
    """The ids of the conversations saved in ``db`` (none when the file does not exist)."""
    try:
        return [s.session_id for s in await SqliteStore.list_sessions(db)]
    except StoreNotFoundError:
        return []


async def choose_session(args: argparse.Namespace, db: Path) -> str:
    """The conversation this run opens: ``--continue`` the last one, ``--session ID`` an
    existing one (``--new`` to start one with that id), else a new one.

    Raises:
        CliError: (status 2) ``--session`` names no saved conversation (and no ``--new``),
            ``--new`` names one that exists, or ``--continue`` finds none.
    """
    where = f" (--db {args.db})" if args.db else ""
    if args.cont:
        if args.session:
            raise CliError("--continue resumes the last conversation: drop --session ID", 2)
        saved = await saved_ids(db)
        if not saved:
            raise CliError(
                f"no conversation to continue{where}: start one with "
                f"`{command_hint(args, 'chat')}`",
                2,
            )
        last = max(await SqliteStore.list_sessions(db), key=lambda s: s.updated_at)
        return last.session_id
    if args.session is None:
        return new_session_id()
    known = args.session in await saved_ids(db)
    if args.new and known:
        raise CliError(
            f"conversation {args.session!r} already exists{where}: drop --new to resume it", 2
        )
    if not args.new and not known:
        raise CliError(
            f"no conversation {args.session!r}{where}: add --new to start one with that id "
            "(/sessions in the chat lists the saved ones)",
            2,
        )
    return str(args.session)


def _when(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


async def list_sessions(db: Path, current: str, out: TextIO) -> None:
    """``/sessions``: each saved conversation with its last change and first message."""
    try:
        sessions = await SqliteStore.list_sessions(db)
    except StoreNotFoundError:
        sessions = []
    sessions.sort(key=lambda s: s.updated_at)
    if not sessions:
        out.write("no saved conversations yet\n")
    for info in sessions:
        mark = "*" if info.session_id == current else " "
        first = shorten(info.first_message, 60) if info.first_message else "(no message)"
        out.write(
            f"{mark} {plain(info.session_id)}  {_when(info.updated_at)}  "
            f"{info.message_count} messages  {first}\n"
        )
    if sessions:
        out.write("(* this one; resume another with: glove-mcp chat --session ID)\n")
    out.flush()


async def list_servers(
    entries: list[McpCatalogueEntry], active: list[str], store: OAuthStore, out: TextIO
) -> None:
    """``/servers``: the catalogue, each server's state in this conversation and its login."""
    for entry in entries:
        state = "active" if entry.id in active else "not active"
        if entry.command:
            login = "runs locally, no login"
        elif await store.get(entry.id) is not None:
            login = "logged in"
        else:
            login = "no login stored"
        out.write(f"{plain(entry.id)}  {state}, {login}  — {shorten(entry.description, 70)}\n")
    if not entries:
        out.write("the catalogue is empty (glove-mcp servers add ID URL)\n")
    out.flush()
