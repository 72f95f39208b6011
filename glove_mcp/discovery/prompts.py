"""System prompts of the discovery subagent, one per ambiguity policy."""

from __future__ import annotations

from collections.abc import Sequence

from glove_mcp.discovery.index import CatalogueItem

__all__ = ["DEFAULT_CATALOGUE_BUDGET", "compact_catalogue", "policy_prompt"]

DEFAULT_CATALOGUE_BUDGET = 3000
"""Tokens of catalogue the subagent's prompt may carry (about four characters a token)."""

_COMMON = (
    "You help a main agent find the tool servers (MCP servers) it needs. The main agent told "
    "you what it needs; the catalogue lists the servers this application supports. Servers "
    "marked active are already available to it."
)

_POLICIES = {
    "interactive": (
        "If one server clearly fits the need, activate it. If several fit about equally well, "
        "call ask_user with the candidates' ids as options, then activate the one the user "
        "picked. If nothing fits, say so. Finish with one short sentence: what you activated, "
        "or why nothing was."
    ),
    "auto-pick-best": (
        "Nobody can be asked: pick the single best server for the need yourself and activate "
        "it; activate a second one only if the need clearly spans two. If nothing fits, say "
        "so. Finish with one short sentence: what you activated, or why nothing was."
    ),
    "defer-to-main": (
        "Do not activate anything. Reply with the best candidates, best first, one per line as "
        "'id — name: why it fits', at most five. If nothing fits, say so."
    ),
}


def compact_catalogue(entries: Sequence[CatalogueItem], active: set[str]) -> str:
    """One line per entry: ``id — name: description [tags] (active)``."""
    lines = []
    for entry in entries:
        tags = f" [{', '.join(entry.tags)}]" if entry.tags else ""
        mark = " (active)" if entry.id in active else ""
        lines.append(f"- {entry.id} — {entry.name}: {entry.description}{tags}{mark}")
    return "\n".join(lines)


def policy_prompt(
    policy: str,
    entries: Sequence[CatalogueItem],
    active: set[str],
    budget_tokens: int = DEFAULT_CATALOGUE_BUDGET,
) -> str:
    """The subagent's system prompt: the policy, and the whole catalogue when it fits the
    budget (otherwise the subagent searches it with ``list_capabilities``)."""
    parts = [_COMMON, _POLICIES[policy]]
    listing = compact_catalogue(entries, active)
    if len(listing) <= budget_tokens * 4:
        parts.append(
            "The whole catalogue (you may still call list_capabilities to rank it for a "
            f"query):\n{listing}"
        )
    else:
        parts.append(
            f"The catalogue has {len(entries)} servers, too many to list here: call "
            "list_capabilities with a few words of the need (and tags, if useful) to find "
            "candidates."
        )
    return "\n\n".join(parts)
