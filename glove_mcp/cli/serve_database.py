"""``glove-mcp serve``'s database: a SQLite file, or PostgreSQL with ``--database`` (internal).

What a session needs beside its conversation store — the event queue and the MCP adapter —
lives in the same database as the store, so with ``--database`` any instance finds all of a
session's state. The flags are checked here, and the database is reached before the server
listens, so a wrong URL or an unreachable server stops the command with a message that names
the flag.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from glove_core import GloveError, SqliteEventQueue
from glove_core.event_queue import EventQueue
from glove_mcp.adapter import McpAdapter, SqliteMcpAdapter
from glove_mcp.cli.errors import CliError
from glove_mcp.server.session_storage import SessionStore

logger = logging.getLogger(__name__)

__all__ = [
    "check_database_flags",
    "check_database_url",
    "check_durable",
    "database_kwargs",
    "session_parts",
    "shown",
    "start_database",
]


def check_database_flags(args: argparse.Namespace) -> None:
    """Refuse contradictory or malformed database flags, naming them."""
    if getattr(args, "durable", False):
        check_durable(args.database)
    if args.database is None:
        return
    if args.db is not None:
        raise CliError("give --db (a SQLite file) or --database (PostgreSQL), not both", 2)
    check_database_url(args.database, driver=False)
    if args.database_pool_max < args.database_pool_min:
        raise CliError(
            f"--database-pool-max ({args.database_pool_max}) must be at least "
            f"--database-pool-min ({args.database_pool_min})",
            2,
        )
    # Last: every flag mistake is named whether or not the driver is installed.
    check_database_url(args.database)


def check_durable(database: str | None) -> None:
    """Refuse ``--durable`` without ``--database`` or without the durable extra."""
    if database is None:
        raise CliError(
            "--durable needs --database postgresql://…: durable turns are kept in the "
            "PostgreSQL database every instance shares",
            2,
        )
    if importlib.util.find_spec("dbos") is None:
        raise CliError("--durable needs the durable extra: pip install 'glove-agents[durable]'", 2)


def check_database_url(url: str, *, driver: bool = True) -> None:
    """Refuse a ``--database`` that is no PostgreSQL URL, or (``driver``) that the driver is
    missing for."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise CliError(
            "--database must be a postgresql:// URL, e.g. postgresql://user:password@host/glove",
            2,
        )
    if not driver:
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise CliError(
            "--database needs the PostgreSQL driver: pip install 'glove-agents[postgres]'", 2
        ) from None


def database_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``HeadlessServer`` keyword arguments for the database flags."""
    if args.database is None:
        return {}
    return {
        "database_url": args.database,
        "database_pool_min": args.database_pool_min,
        "database_pool_max": args.database_pool_max,
        "database_timeout": args.database_timeout,
        "database_max_locks": args.database_max_locks,
    }


async def start_database(open_server: Any, args: argparse.Namespace) -> None:
    """Reach the database before listening; a failure names ``--database``."""
    try:
        await open_server()
    except GloveError as exc:
        from glove_core.postgres import redact_url

        raise CliError(f"--database {redact_url(args.database)}: {exc}", 1) from None


def shown(db: Path | None, args: argparse.Namespace) -> str:
    """Where the sessions are, for the terminal (a URL without its password)."""
    if db is not None:
        return str(db)
    from glove_core.postgres import redact_url

    return redact_url(args.database)


async def session_parts(
    conversation: SessionStore,
    db: Path | None,
    session_id: str,
    tokens: Any,
    stack: AsyncExitStack,
) -> tuple[EventQueue, McpAdapter]:
    """The session's event queue and MCP adapter, in the conversation's database."""
    if db is None:
        from glove_core.event_queue_postgres import PostgresEventQueue
        from glove_core.stores.postgres import PostgresStore
        from glove_mcp.adapter_postgres import PostgresMcpAdapter

        assert isinstance(conversation, PostgresStore)
        queue = await PostgresEventQueue(conversation.database, session_id).open()
        stack.push_async_callback(queue.aclose)
        return queue, PostgresMcpAdapter(conversation.database, session_id, tokens=tokens)
    # check_pages=False: the server checked the file once, before any session opened.
    sqlite_queue = SqliteEventQueue(db, session_id, check_pages=False)
    stack.push_async_callback(sqlite_queue.aclose)
    adapter = SqliteMcpAdapter(db, session_id, tokens=tokens, check_pages=False)
    stack.push_async_callback(adapter.aclose)
    return sqlite_queue, adapter
