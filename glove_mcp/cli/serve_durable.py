"""``glove-mcp serve --database URL --durable``: each turn a durable workflow (internal).

The execution (``glove_core.dbos_execution.DbosExecution``, the ``durable`` extra) is started
on the server's database before the server listens; a sweep then looks every few seconds for
turns a dead instance left and lets the session's agent finish them here (a session's next
request or outside event does the same at once). The sweep gives up on a session whose turn
another instance holds: that instance is alive and finishes its own turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from glove_mcp.cli.errors import CliError

if TYPE_CHECKING:
    from glove_core.dbos_execution import DbosExecution
    from glove_mcp.server import HeadlessServer

__all__ = ["SWEEP_SECONDS", "durable_execution"]

logger = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0
"""Between two looks for turns a dead instance left."""

_TURN_WAIT = 0.5  # seconds the sweep waits for a session's turn before leaving it


@contextlib.asynccontextmanager
async def durable_execution(
    database_url: str, server: HeadlessServer
) -> AsyncIterator[DbosExecution]:
    """The durable execution on ``database_url``, started, with the sweep running; both
    stopped on exit (unfinished turns stay resumable by another instance)."""
    from glove_core.dbos_execution import DbosExecution

    execution: DbosExecution = DbosExecution(database_url)
    try:
        await execution.start()
    except Exception as exc:
        await execution.aclose()
        raise CliError(
            f"--durable: cannot start durable turns in --database: {type(exc).__name__}", 1
        ) from None
    sweep = asyncio.create_task(_sweep(execution, server))
    try:
        yield execution
    finally:
        sweep.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweep
        await execution.aclose()


async def _sweep(execution: DbosExecution, server: HeadlessServer) -> None:
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            # A turn younger than one sweep is almost surely running on a live instance.
            for session_id in await execution.unfinished_conversations(older_than=SWEEP_SECONDS):
                resumed = await server.resume_interrupted(session_id, wait=_TURN_WAIT)
                if resumed:
                    logger.info("finished %d interrupted turn(s) of %s", resumed, session_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("the sweep for interrupted turns failed; trying again")
