"""Tools that join a conversation after it began: declared outside the cached prompt prefix.

The provider caches in the order tools → system → messages, so a tool added to the list
mid-conversation would make the next call read nothing from the cache. Instead:

- The tools offered at the first model call of a conversation epoch (its start, or its last
  compaction) form the *baseline*: they are ordinary tools, part of the cached prefix, and stay
  so for the whole epoch.
- A tool that a result references (``ToolResultData.tool_references``, saved in the history)
  and that is not in the baseline is declared *deferred*: the Anthropic API keeps it out of the
  prefix and loads it where the reference sits (``defer_loading`` + ``tool_reference``).
- A tool that a source says joined mid-conversation (``JoiningToolSource``) and that nothing
  references yet is *pending*: held back from the model until the loop attaches a reference to
  the next tool results it saves, so the prefix never moves.
- Any other new tool (folded mid-conversation) joins the baseline: that rewrites the prefix
  once, and the cache-health check reports what it cost.

After a compaction the references are gone with the history, so every tool offered then is in
the new epoch's baseline: ordinary, never lost. A restart (a new Glove on the same store) finds
the references in the saved history and declares the same tools deferred.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from glove_core._history_facts import HistoryFacts
from glove_core.tools import JoiningToolSource, Tool, ToolSpec
from glove_core.types import Message, ToolResult

__all__ = [
    "JoiningToolSource",
    "ToolPlan",
    "ToolPrefix",
    "attach_references",
    "epoch_marker",
    "referenced_tools",
]

logger = logging.getLogger(__name__)


def referenced_tools(messages: Sequence[Message]) -> set[str]:
    """Every tool name that a tool result in ``messages`` references."""
    names: set[str] = set()
    for message in messages:
        results = message.tool_results
        if results:
            for result in results:
                references = result.result.tool_references
                if references:
                    names.update(references)
    return names


def epoch_marker(messages: Sequence[Message]) -> str | None:
    """The id of the compaction summary that starts ``messages`` (the visible history), if any."""
    for message in messages:
        if message.is_compaction:
            return message.id
    return None


@dataclass(frozen=True)
class ToolPlan:
    """The tools of one model call."""

    tools: list[Tool]
    """What the model is offered, in source order (pending tools left out)."""
    deferred: frozenset[str]
    """Names among ``tools`` declared outside the cached prefix."""
    pending: tuple[str, ...]
    """Held back until a saved tool result references them."""
    specs: tuple[ToolSpec, ...] = ()
    """``tools`` as the model sees them (made once per plan, not per call)."""


class ToolPrefix:
    """Per conversation, the baseline of its current epoch (see the module docstring)."""

    def __init__(self) -> None:
        self._baselines: dict[str, tuple[str | None, set[str]]] = {}
        self._unknown: dict[str, set[str]] = {}
        # Per conversation: the references found so far, how many messages that covered, the
        # id of the last of them and the epoch marker among them, so each call reads only the
        # messages added since.
        self._scans: dict[str, tuple[int, str, set[str], str | None]] = {}
        # Per conversation: the last plan and what it was made from. The same tools, epoch,
        # references and joined names give the same plan, so it is made once per change.
        self._plans: dict[str, tuple[Sequence[Tool], str | None, set[str], set[str], ToolPlan]] = {}

    def _scan(self, conversation: str, history: Sequence[Message]) -> tuple[set[str], str | None]:
        """The tool names ``history`` references and its epoch marker."""
        known = self._scans.get(conversation)
        if known is not None:
            count, last_id, names, marker = known
            if 0 < count <= len(history) and history[count - 1].id == last_id:
                added = history[count:]
                found = referenced_tools(added)
                if found - names:
                    names = names | found
                if marker is None:
                    marker = epoch_marker(added)
                if added:
                    self._scans[conversation] = (len(history), history[-1].id, names, marker)
                return names, marker
        names = referenced_tools(history)
        marker = epoch_marker(history)
        if history:
            self._scans[conversation] = (len(history), history[-1].id, names, marker)
        return names, marker

    def seed(self, conversation: str, facts: HistoryFacts) -> None:
        """Take what a request's start read of its history (``facts``) as this conversation's
        scan, so the next plan reads only the messages added since."""
        if facts.count:
            last = facts.messages[facts.count - 1].id
            self._scans[conversation] = (facts.count, last, set(facts.references), facts.epoch)

    def _referenced(self, conversation: str, history: Sequence[Message]) -> set[str]:
        return self._scan(conversation, history)[0]

    def plan(
        self,
        conversation: str,
        history: Sequence[Message],
        tools: Sequence[Tool],
        joined: Collection[str],
    ) -> ToolPlan:
        """Decide which of ``tools`` are ordinary, deferred and pending for the next call on
        ``history`` (the visible history)."""
        referenced, marker = self._scan(conversation, history)
        last = self._plans.get(conversation)
        if (
            last is not None
            and last[0] is tools
            and last[1] == marker
            and last[2] == referenced
            and last[3] == joined
        ):
            return last[4]
        self._report_unknown(conversation, referenced, tools)
        baseline = self._baseline(conversation, marker, tools, referenced)
        deferred: set[str] = set()
        pending: list[str] = []
        offered: list[Tool] = []
        for tool in tools:
            name = tool.name
            if name in baseline:
                offered.append(tool)
            elif name in referenced:
                deferred.add(name)
                offered.append(tool)
            elif name in joined:
                pending.append(name)
            else:
                logger.info(
                    "tool %r joined the prompt's cached prefix mid-conversation: the next call "
                    "rewrites the cache from the tools on",
                    name,
                )
                baseline.add(name)
                offered.append(tool)
        if offered and len(deferred) == len(offered):
            # The API refuses a request whose every tool is deferred; ordinary they stay.
            baseline.update(deferred)
            deferred.clear()
        plan = ToolPlan(
            offered, frozenset(deferred), tuple(pending), tuple(t.spec for t in offered)
        )
        self._plans[conversation] = (tools, marker, set(referenced), set(joined), plan)
        return plan

    def pending(
        self,
        conversation: str,
        history: Sequence[Message],
        results: Sequence[ToolResult],
        tools: Sequence[Tool],
        joined: Collection[str],
    ) -> list[str]:
        """The joined tools that neither ``history`` nor the unsaved ``results`` reference and
        that are not ordinary: the names ``results`` should reference."""
        referenced = self._referenced(conversation, history)
        for result in results:
            referenced = referenced | set(result.result.tool_references or ())
        known = self._baselines.get(conversation)
        baseline = known[1] if known is not None else set()
        return [
            t.name
            for t in tools
            if t.name in joined and t.name not in referenced and t.name not in baseline
        ]

    def _report_unknown(
        self, conversation: str, referenced: set[str], tools: Sequence[Tool]
    ) -> None:
        unknown = referenced - {t.name for t in tools}
        reported = self._unknown.setdefault(conversation, set())
        for name in sorted(unknown - reported):
            logger.warning(
                "a tool result of conversation %r references tool %r, which no tool source "
                "offers: the reference stays in the saved history and is left out of requests",
                conversation,
                name,
            )
            reported.add(name)

    def _baseline(
        self,
        conversation: str,
        marker: str | None,
        tools: Sequence[Tool],
        referenced: set[str],
    ) -> set[str]:
        known = self._baselines.get(conversation)
        if known is not None and known[0] == marker:
            return known[1]
        # The first call of this epoch in this process: whatever nothing references is ordinary
        # (the cache of a new epoch is cold anyway; after a restart this is what the previous
        # process sent, unless a tool was still pending when it stopped).
        baseline = {t.name for t in tools if t.name not in referenced}
        self._baselines[conversation] = (marker, baseline)
        return baseline


def attach_references(results: list[ToolResult], names: Sequence[str]) -> list[ToolResult]:
    """``results`` with ``names`` referenced by the last successful one (those it does not
    reference already); unchanged when ``names`` is empty or no result succeeded (the names
    stay pending for the next step, since a failed result should not load tools)."""
    if not names:
        return results
    for index in range(len(results) - 1, -1, -1):
        result = results[index]
        if result.result.status != "success":
            continue
        have = list(result.result.tool_references or ())
        new = [n for n in names if n not in have]
        if not new:
            return results
        data = result.result.model_copy(update={"tool_references": have + new})
        changed = list(results)
        changed[index] = result.model_copy(update={"result": data})
        return changed
    return results
