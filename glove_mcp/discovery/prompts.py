"""System prompts of the discovery subagent, one per ambiguity policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from glove_mcp.discovery.index import CatalogueItem

__all__ = ["CANDIDATES", "DEFAULT_CATALOGUE_BUDGET", "compact_catalogue", "fits", "policy_prompt"]

DEFAULT_CATALOGUE_BUDGET = 12_000
"""Tokens of catalogue the subagent's prompt may carry (about four characters a token): room
for a catalogue of about 300 real servers (the 282 of ``bench/data/realistic`` take about
9,100 tokens, 10,400 with the tool names of 41 of them), so the model chooses among all of
them; past it, the prompt lists the best candidates for the need instead."""

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


CANDIDATES = 30
"""The most best matches the subagent's prompt lists when the whole catalogue does not fit
(fewer when they do not fit the budget): a shortlist as long as the one discovery is measured
on (recall at 30, ``bench/registry_scale.py``)."""

_TOOLS_SHOWN = 12


def compact_catalogue(
    entries: Sequence[CatalogueItem],
    active: set[str],
    tools: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """One line per entry: ``id — name: description [tags] {keywords} (tools: ...) (active)``.

    Args:
        entries: the entries to list.
        active: ids to mark active.
        tools: known tool names per id (the first ``12`` are shown), to tell near-duplicates
            apart.
    """
    lines = []
    for entry in entries:
        tags = f" [{', '.join(entry.tags)}]" if entry.tags else ""
        keywords = list(getattr(entry, "keywords", None) or ())
        words = f" {{{', '.join(keywords)}}}" if keywords else ""
        names = list((tools or {}).get(entry.id, ()))
        more = f", +{len(names) - _TOOLS_SHOWN} more" if len(names) > _TOOLS_SHOWN else ""
        known = f" (tools: {', '.join(names[:_TOOLS_SHOWN])}{more})" if names else ""
        mark = " (active)" if entry.id in active else ""
        lines.append(f"- {entry.id} — {entry.name}: {entry.description}{tags}{words}{known}{mark}")
    return "\n".join(lines)


def fits(listing: str, budget_tokens: int) -> bool:
    """Whether ``listing`` fits ``budget_tokens`` (about four characters a token)."""
    return len(listing) <= budget_tokens * 4


def policy_prompt(
    policy: str,
    entries: Sequence[CatalogueItem],
    active: set[str],
    budget_tokens: int = DEFAULT_CATALOGUE_BUDGET,
    *,
    candidates: Sequence[CatalogueItem] = (),
    tools: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The subagent's system prompt: the policy, and the whole catalogue when it fits the
    budget; otherwise the best ``candidates`` for the need (ranked by the caller), with the
    advice to search again in other words before deciding that nothing fits.

    Args:
        policy: the ambiguity policy.
        entries: the whole catalogue.
        active: the ids active now.
        budget_tokens: how much catalogue the prompt may carry.
        candidates: the best matches for the need, best first (used when the whole
            catalogue does not fit).
        tools: known tool names per id, shown with each entry.
    """
    parts = [_COMMON, _POLICIES[policy]]
    listing = compact_catalogue(entries, active, tools)
    if fits(listing, budget_tokens):
        parts.append(
            "The whole catalogue (you may still call list_capabilities to rank it for a "
            f"query):\n{listing}"
        )
        return "\n\n".join(parts)
    shown: list[CatalogueItem] = []
    for entry in candidates[:CANDIDATES]:
        if not fits(compact_catalogue([*shown, entry], active, tools), budget_tokens):
            break
        shown.append(entry)
    search = (
        "call list_capabilities with a few words of the need (and tags, if useful); when "
        "nothing fits, search again in other words (what the app is called, the kind of app, "
        "a synonym, a product name) before you decide that nothing fits. list_capabilities "
        "ranks the whole catalogue: keywords=[...] keeps only servers that mention every "
        "word given, tags=[...] only servers with those tags, and page=2, 3, ... shows the "
        "matches after the first page."
    )
    if shown:
        parts.append(
            f"The catalogue has {len(entries)} servers, too many to list here. A shortlist: "
            f"the {len(shown)} best matches for the need, ranked by a search on its words "
            f"(best first):\n"
            f"{compact_catalogue(shown, active, tools)}\n\nIf none of them clearly fits, " + search
        )
    else:
        parts.append(f"The catalogue has {len(entries)} servers, too many to list here: " + search)
    return "\n\n".join(parts)
