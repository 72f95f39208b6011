"""Which OAuth token store a ``glove-mcp`` command uses: the rule for ``--store`` and
``--database``.

The same for ``serve``, ``auth``, ``status`` and ``logout``: an explicit ``--store
file|keyring`` wins; without it, ``--database URL`` (or ``$GLOVE_DATABASE_URL``) means the
tokens and client registrations live in that PostgreSQL database (``PostgresOAuthStore``),
shared by every instance, which refresh them single-flight across machines; without either,
the 0600 file. Imports nothing: ``glove-mcp status`` asks it on its fast path, and the
command's error messages ask it for the login command they print.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from typing import Literal, TypeAlias

    TokenStoreKind: TypeAlias = Literal["file", "keyring", "database"]

__all__ = ["DATABASE_ENV", "database_url", "store_kind"]

DATABASE_ENV = "GLOVE_DATABASE_URL"
"""The environment variable ``--database`` defaults to."""


def database_url(args: argparse.Namespace) -> str | None:
    """``--database``, else ``$GLOVE_DATABASE_URL``, for a command that has the flag; else
    None (``chat`` has none, and the variable must not leak into its hints)."""
    if not hasattr(args, "database"):
        return None
    given: str | None = args.database
    return given or os.environ.get(DATABASE_ENV) or None


def store_kind(args: argparse.Namespace) -> TokenStoreKind:
    """Where this run's OAuth tokens live (see the module docstring for the rule)."""
    explicit = getattr(args, "store", None)
    if explicit == "keyring":
        return "keyring"
    if explicit == "file":
        return "file"
    return "database" if database_url(args) else "file"
