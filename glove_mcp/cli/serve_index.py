"""``serve --index-tools MINUTES``: the catalogue's tools listed ahead, in the background.

Every MINUTES, a task of the serve process lists the tools of the catalogue servers it can
reach without a credential — open servers and stdio servers — into the learned-tools store of
the server's database (``glove_mcp.discovery.tool_index``), with their instructions and TTL,
where every session's discovery reads them; a server whose kept listing is still fresh by its
TTL is not contacted. It sends no credential: the store is shared by every principal of the
database, so tools listed with one principal's login would be shown to all; a server that needs
a login is learnt when a session of a principal who has one connects it (as before). The task
never holds a conversation up: it runs beside the sessions, one server at a time per slot, and
a failure is one log line; a stopping server cancels it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from glove_mcp.adapter import LearnedToolsStore, SqliteMcpAdapter
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.discovery.tool_index import index_tools

__all__ = ["INDEXER_SESSION", "background_index"]

logger = logging.getLogger("glove_mcp.cli.serve")

INDEXER_SESSION = "glove-serve-tool-index"
"""The conversation id the index's adapter is opened with (it activates nothing)."""


@contextlib.asynccontextmanager
async def background_index(
    minutes: float | None,
    entries: Sequence[McpCatalogueEntry],
    db: Path | None,
    database: Any = None,
) -> AsyncIterator[None]:
    """Run the background index while the block runs (nothing when ``minutes`` is None).

    Args:
        minutes: how often to list the servers' tools, or None for never.
        entries: the catalogue.
        db: the server's SQLite file, or None when the sessions are in PostgreSQL.
        database: the server's PostgreSQL database (when ``db`` is None).
    """
    if minutes is None:
        yield
        return
    async with contextlib.AsyncExitStack() as stack:
        store: LearnedToolsStore
        if db is not None:
            store = await stack.enter_async_context(
                SqliteMcpAdapter(db, INDEXER_SESSION, check_pages=False)
            )
        else:
            from glove_mcp.adapter_postgres import PostgresMcpAdapter

            store = await stack.enter_async_context(PostgresMcpAdapter(database, INDEXER_SESSION))
        task = asyncio.create_task(_every(minutes * 60.0, entries, store))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _every(
    seconds: float, entries: Sequence[McpCatalogueEntry], store: LearnedToolsStore
) -> None:
    while True:
        try:
            outcomes = await index_tools(entries, store, concurrency=2)
        except Exception as exc:  # the next round tries again
            logger.warning("serve: the tool index failed (%s: %s)", type(exc).__name__, exc)
        else:
            listed = sum(1 for o in outcomes if o.state == "listed")
            fresh = sum(1 for o in outcomes if o.state == "fresh")
            logger.info(
                "serve: tools listed ahead for %d of %d servers (%d still fresh)",
                listed,
                len(outcomes),
                fresh,
            )
            for outcome in outcomes:
                if outcome.state not in ("listed", "fresh"):
                    logger.info("serve: tool index: %s skipped: %s", outcome.id, outcome.detail)
        await asyncio.sleep(seconds)
