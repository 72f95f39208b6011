"""The steps of one turn, as a durable execution sees them.

The in-process loop runs a turn straight through. A durable execution (``Glove(execution=…)``,
see ``glove_core.execution``) hands the loop a ``TurnSteps``: the loop then runs each part of
the turn that touches the world — the start of the request, each model call with the saves
around it, each tool call, the save of the results — through it, so the execution can record
each part's outcome and, after a crash, hand the recorded outcome back instead of doing the
part again. Without one (the default) none of this exists: the loop calls its parts directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from glove_core.types import ToolCall, ToolResult

__all__ = ["INTERRUPTED_NOT_RUN", "ToolStep", "TurnSteps"]

T = TypeVar("T")

INTERRUPTED_NOT_RUN = (
    "interrupted; not run again — check before retrying: the process running this call "
    "stopped while it ran, and the tool is not marked idempotent, so whether it took effect "
    "is unknown"
)
"""The result message of a non-idempotent call that was in flight when its process died."""


@dataclass(frozen=True, kw_only=True)
class ToolStep:
    """One tool call of a reply, split where a durable execution needs it split.

    ``prepare`` does everything before the tool runs (input check, the person's permission):
    it returns the call's final result when the tool must not run, else None. ``invoke`` runs
    the tool and returns its result. Either may be run again after a crash; ``invoke`` is run
    again only when ``idempotent``.
    """

    call: ToolCall
    idempotent: bool
    prepare: Callable[[], Awaitable[ToolResult | None]]
    invoke: Callable[[], Awaitable[ToolResult]]
    interrupted: Callable[[], Awaitable[ToolResult]]
    """The result (published like any other) for a call that was in flight at a crash and is
    not run again."""


@runtime_checkable
class TurnSteps(Protocol):
    """Where the parts of one turn run. The loop calls these in the same order on every
    execution of the same turn, so an execution may number them."""

    async def step(self, name: str, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn`` as the next step, or return what it returned before."""
        ...

    async def tool_calls(self, steps: Sequence[ToolStep], *, parallel: bool) -> list[ToolResult]:
        """Run the tool calls of one reply (concurrently when ``parallel``), in the order
        given, each at most once unless idempotent."""
        ...

    def first_live_step(self) -> bool:
        """True once, at the first step a resumed turn actually runs (not replays): what that
        step would save may already be saved by the process that died."""
        ...
