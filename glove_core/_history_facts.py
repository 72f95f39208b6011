"""What a request needs to know of the saved history it starts on, in one pass.

A request that starts on a fresh agent (a restarted process, a session the headless server
reopens) asks four questions of every saved message: which context updates switched tools off,
does any tool result carry ``render_data`` (kept from models), which tools do the results
reference and where does the epoch start (``glove_core._deferral``). Asked one by one, that was
four walks over a history of hundreds of messages, each reading the same fields again; this
walks it once, and the answers seed the parts that would otherwise walk it themselves. Later
model calls of the request look only at what was added since.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glove_core.types import Message

__all__ = ["HistoryFacts", "history_facts"]


@dataclass(frozen=True, slots=True)
class HistoryFacts:
    """The answers for one list of messages (``history_facts``)."""

    messages: list[Message]
    """The list they were read from (as it was: it may grow later)."""
    count: int
    """How many messages it had then."""
    render_data: bool
    """A tool result carries ``render_data``."""
    references: set[str] = field(default_factory=set)
    """Every tool name a tool result references."""
    epoch: str | None = None
    """The id of the first compaction summary, if any."""
    runtime: list[Message] = field(default_factory=list)
    """The messages the framework saved as runtime context, in order."""


def history_facts(messages: list[Message]) -> HistoryFacts:
    """Read ``messages`` once (see the module docstring)."""
    render = False
    references: set[str] = set()
    epoch: str | None = None
    runtime: list[Message] = []
    for message in messages:
        if message.framework_context == "runtime":
            runtime.append(message)
        if epoch is None and message.is_compaction:
            epoch = message.id
        results = message.tool_results
        if results:
            for result in results:
                data = result.result
                if data.render_data is not None:
                    render = True
                if data.tool_references:
                    references.update(data.tool_references)
    return HistoryFacts(messages, len(messages), render, references, epoch, runtime)
