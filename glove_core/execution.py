"""How a Glove runs a turn: the seam for durable execution.

By default (``Glove(execution=None)``) a turn runs in the process's event loop, straight through
``loop.run_request``: nothing here is on that path. An ``Execution`` takes over once the Glove
holds the turn (its lock and the store's turn lock): it may run the turn as a durable workflow
whose steps it records (``glove_core.steps``), and before a new turn it resumes the turns of the
same conversation that a dead process left unfinished. ``glove_core.dbos_execution`` is one on
DBOS (the ``durable`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from glove_core.abort import AbortSignal
from glove_core.event_queue import OutsideEvent
from glove_core.loop import LoopParts, run_request
from glove_core.result import RequestResult
from glove_core.steps import TurnSteps
from glove_core.types import Message

__all__ = ["Execution", "Turn"]


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One turn of one conversation, as the Glove hands it to its execution. The Glove holds
    the conversation (in this process and, through the store's turn lock, across processes)
    for as long as the execution's call lasts."""

    conversation: str
    """The store's identifier."""
    parts: LoopParts
    signal: AbortSignal

    async def run(
        self,
        request: Message,
        events: list[OutsideEvent] | None = None,
        steps: TurnSteps | None = None,
    ) -> RequestResult:
        """Run the request (or the wake-up carrying ``events``) through the loop, each part
        that touches the world a step of ``steps``."""
        return await run_request(self.parts, request, self.signal, events, steps=steps)


@runtime_checkable
class Execution(Protocol):
    """Runs the turns of a Glove. Called with the turn held."""

    async def run_turn(
        self, turn: Turn, request: Message, events: list[OutsideEvent] | None
    ) -> RequestResult:
        """Resume what the conversation left unfinished, then run this request."""
        ...

    async def resume_turns(self, turn: Turn) -> int:
        """Finish the turns of ``turn.conversation`` a dead process left unfinished; return
        how many."""
        ...
