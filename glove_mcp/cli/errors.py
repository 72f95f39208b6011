"""The ``glove-mcp`` command's failures as one terminal line each.

Library errors advise library users ("use open_browser=False", "log in again with
run_mcp_oauth(...)"); on the terminal the same advice must name the command's flags, and a
command to run must keep the ``--catalogue FILE`` and ``--store`` (or ``--database``, without
its password) the person passed, so that running it as printed works. The library's messages
stay as they are; they are translated here, where they reach the terminal.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse

__all__ = ["CliError", "command_hint", "in_flags", "terminal_message"]


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def command_hint(args: argparse.Namespace | None, *words: str) -> str:
    """``glove-mcp WORDS…`` with the catalogue and store options of ``args`` kept, quoted
    for a POSIX shell: what the person can paste to run it."""
    parts = ["glove-mcp", *words]
    catalogue = getattr(args, "catalogue", None)
    if catalogue:
        parts += ["--catalogue", catalogue]
    store = getattr(args, "store", None)
    url = None
    if args is not None:
        from glove_mcp.cli.token_kind import database_url

        url = database_url(args)
    if store == "keyring" or (store == "file" and url):
        # (--store file only where a database would otherwise be the default.)
        parts += ["--store", store]
    elif store is None and url:
        # The login must go where this run reads tokens: the same database, named
        # without its password (the person types it, or it comes from a .pgpass file).
        from glove_core.postgres import redact_url

        parts += ["--database", redact_url(url)]
    if any(not part or not _SAFE.issuperset(part) for part in parts):
        import shlex  # only when something needs quoting: ``status`` prints hints fast

        return shlex.join(parts)
    return " ".join(parts)


# Library advice, and the same advice in the command's flags.
_PHRASES = (
    ("open_browser=False and paste", "--no-browser and paste"),
    ("pass it as pre_registered_client", "pass it with --client-id (and --client-secret-env)"),
    ("use FsOAuthStore(path) instead of KeyringOAuthStore", "use --store file instead"),
    ("Point SqliteStore at a different file", "Pass --db FILE to use a different file"),
    ("connect to it without OAuth", "it needs no `glove-mcp auth`"),
    ("it is created by the first SqliteStore that writes to it", "check --db"),
    ("pass api_key=... to the model adapter, set the", "set the"),
    (", or pass a configured client=...", ""),
    ("(api_key=... or the environment variable)", "in ANTHROPIC_API_KEY"),
    ("Wait retry_after seconds", "Wait a little"),
    (
        "ScriptedModel has no reply left: its script held",
        "the --script file has no reply left: it held",
    ),
    ("Add more items to the script.", "Add replies to the file."),
)
# What shlex.quote leaves unquoted; a set, not a pattern: ``status`` prints hints and compiling
# a pattern costs its start-up more than the check.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
# Patterns of error messages: compiled by ``re`` at first use, never at start-up.
_LOGIN_CALL = r"run_mcp_oauth\((?:[^()]|\([^()]*\))*\)|run_mcp_oauth"
_KEY = r"key='([^']+)'"


def in_flags(message: str, args: argparse.Namespace | None, server: str | None = None) -> str:
    """``message`` with library advice replaced by the command's: flags for keyword
    arguments, ``glove-mcp auth ID …`` for a call of ``run_mcp_oauth``."""
    for library, command in _PHRASES:
        message = message.replace(library, command)

    def login(match: re.Match[str]) -> str:
        key = re.search(_KEY, match.group(0))
        target = key.group(1) if key else server
        return f"`{command_hint(args, 'auth', target)}`" if target else "`glove-mcp auth ID`"

    return re.sub(_LOGIN_CALL, login, message)


def terminal_message(exc: Exception, args: argparse.Namespace | None) -> tuple[str, int]:
    """The line to print for ``exc`` (without the ``glove-mcp:`` prefix) and the exit status."""
    # Imported only now: glove_core is not needed to parse arguments or to print help.
    from glove_core.errors import GloveError
    from glove_mcp.errors import (
        GloveMcpError,
        McpAuthExpiredError,
        McpInsufficientScopeError,
    )

    if isinstance(exc, CliError):
        return str(exc), exc.status
    if isinstance(exc, McpAuthExpiredError):
        hint = command_hint(args, "auth", exc.server)
        return (
            f"MCP server {exc.server!r} at {exc.url} rejected the credentials (401), also "
            f"after a fresh token was asked for. Log in again: `{hint}`",
            1,
        )
    if isinstance(exc, McpInsufficientScopeError):
        hint = command_hint(args, "auth", exc.server)
        needs = f"scope {exc.scope!r}" if exc.scope else "a scope it does not have"
        return (
            f"MCP server {exc.server!r} refused the request: the token lacks {needs}. Log in "
            f"again with an account that grants it: `{hint}`",
            1,
        )
    if isinstance(exc, GloveError | GloveMcpError):
        status = getattr(exc, "exit_status", 1)
        server = getattr(exc, "server", None) or getattr(exc, "key", None)
        return in_flags(str(exc), args, server if isinstance(server, str) else None), status
    return f"unexpected {type(exc).__name__}: {exc} (rerun with --debug)", 1
