"""Whole programs in one call: the terminal agent, the headless server with its chat page, and
the login — what the ``glove-mcp`` command runs, for a script of a few lines.

Each uses the library's defaults, the command's: the catalogue ``servers.toml`` and the tokens
``oauth.json`` in the data directory (``glove_mcp.paths``), conversations in a SQLite file
there, outside events in a durable queue, discovery on, tokens refreshed as they expire. Extra
command-line flags (``argv``, by default the program's own) are the command's, so
``python my_agent.py --session work`` resumes a conversation as ``glove-mcp chat --session
work`` would.

Example:
    >>> import sys
    >>> from glove_mcp.programs import run_chat
    >>> sys.exit(run_chat())

The command's modules are imported when a program runs, not with this module.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["run_chat", "run_login", "run_server"]


def _run(command: list[str], catalogue: str | None, argv: Sequence[str] | None) -> int:
    from glove_mcp.cli import main

    given = list(sys.argv[1:] if argv is None else argv)
    if catalogue is not None:
        command += ["--catalogue", catalogue]
    return main([*command, *given])


def run_chat(catalogue: str | None = None, argv: Sequence[str] | None = None) -> int:
    """Chat with an agent in the terminal (``glove-mcp chat``): Claude (``ANTHROPIC_API_KEY``)
    with the catalogue's servers as tools, found as it needs them, logged in with the stored
    tokens; the conversation is saved and can be resumed.

    Args:
        catalogue: a catalogue file (default: ``servers.toml`` in the configuration
            directory if it exists, else the built-in catalogue).
        argv: more ``glove-mcp chat`` flags (default: the program's arguments).

    Returns:
        The exit status (0 when the person left the chat).
    """
    return _run(["chat"], catalogue, argv)


def run_server(
    catalogue: str | None = None, *, web: bool = True, argv: Sequence[str] | None = None
) -> int:
    """Serve the agent over HTTP (``glove-mcp serve``): one conversation per session, kept in
    SQLite, its events in a durable queue, clients authenticated with the bearer key in
    ``GLOVE_API_KEY``; with ``web``, a chat page at ``/``.

    Args:
        catalogue: as for ``run_chat``.
        web: serve the chat page (and let its person answer permissions and forms).
        argv: more ``glove-mcp serve`` flags (``--port``, ``--host``, ...; default: the
            program's arguments).

    Returns:
        The exit status once the server stopped.
    """
    return _run(["serve", *(["--web"] if web else [])], catalogue, argv)


def run_login(
    server_id: str, catalogue: str | None = None, argv: Sequence[str] | None = None
) -> int:
    """Log in to catalogue server ``server_id`` with OAuth (``glove-mcp auth``) and store the
    tokens where ``run_chat`` and ``run_server`` find them.

    Args:
        server_id: the server's catalogue id.
        catalogue: as for ``run_chat``.
        argv: more ``glove-mcp auth`` flags (e.g. ``--no-browser``; default: the program's
            arguments).

    Returns:
        The exit status (0 once the tokens are stored).
    """
    return _run(["auth", server_id], catalogue, argv)
