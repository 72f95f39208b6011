"""The OAuth token store of ``glove-mcp auth``, ``status`` and ``logout``, and of ``serve
--database``: the file, the keyring, or the PostgreSQL database's ``PostgresOAuthStore``.

Which one follows ``token_kind.store_kind`` (an explicit ``--store`` wins, else
``--database``, else the file). ``auth``, ``status`` and ``logout`` have no other use for a
database, so there ``--store`` and ``--database`` together are refused.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from glove_mcp.cli.token_kind import DATABASE_ENV, database_url, store_kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator

    from glove_core.postgres import PostgresDatabase
    from glove_mcp.oauth import OAuthStore

__all__ = ["check_token_flags", "command_token_store", "database_token_store"]


def check_token_flags(args: argparse.Namespace) -> None:
    """For ``auth``, ``status`` and ``logout``: refuse ``--store`` with ``--database`` and a
    malformed URL, naming the flags (exit status 2). ``--store`` with the URL only in
    ``$GLOVE_DATABASE_URL`` is no contradiction: the explicit flag wins."""
    from glove_mcp.cli.errors import CliError

    if args.database and args.store is not None:
        raise CliError(
            f"give --store {args.store} or --database, not both: --database keeps the OAuth "
            "tokens in that database",
            2,
        )
    if store_kind(args) == "database":
        from glove_mcp.cli.serve_database import check_database_url

        url = database_url(args)
        assert url is not None
        where = "" if args.database else f" (from ${DATABASE_ENV})"
        try:
            check_database_url(url)
        except CliError as exc:
            raise CliError(f"{exc}{where}", exc.status) from None


async def database_token_store(database: PostgresDatabase, url: str) -> OAuthStore:
    """The ``PostgresOAuthStore`` on ``database``, its table migrated now, so an unreachable
    database or one this user may not write stops the command naming ``--database``."""
    from glove_core.errors import GloveError
    from glove_core.postgres import redact_url
    from glove_mcp.cli.errors import CliError
    from glove_mcp.oauth.postgres_store import PostgresOAuthStore

    try:
        await database.open()
        await database.migrate(PostgresOAuthStore.schema)
    except GloveError as exc:
        raise CliError(f"--database {redact_url(url)}: {exc}", 1) from None
    return PostgresOAuthStore(database)


@asynccontextmanager
async def command_token_store(args: argparse.Namespace) -> AsyncIterator[OAuthStore]:
    """The store of ``auth``, ``status`` and ``logout``, open for the block (a database's
    connections are closed after it)."""
    kind = store_kind(args)
    if kind != "database":
        from glove_mcp.cli.config import open_token_store

        yield open_token_store(kind)
        return
    url = database_url(args)
    assert url is not None
    if not getattr(args, "debug", False):
        import logging

        # The pool logs every failed connection attempt; the command says it once, in a
        # line naming --database (--debug shows the attempts).
        logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
    from glove_core.postgres import PostgresDatabase

    # One command, a few statements: a small pool, and a lock connection for a refresh
    # or a revocation.
    database = PostgresDatabase(
        url, min_size=1, max_size=2, timeout=args.database_timeout, max_locks=2
    )
    try:
        yield await database_token_store(database, url)
    finally:
        await database.aclose()
