"""Discovery: finding the MCP server a need calls for, and switching it on mid-conversation.

- ``capability``: the ``find_capability`` subagent and its tools; ``prompts``: its prompts.
- ``index``: ranking a catalogue (``CatalogueIndex``, ``match_entries``), built on the private
  ``_ranking`` (BM25F), ``_text`` (tokens and stems), ``_synonyms`` (query rewriting and
  expansion), ``_spelling`` (one-edit corrections) and ``_lexicon`` (the word lists of
  ``data/lexicon.toml``).
"""

from glove_mcp.discovery.capability import FIND_CAPABILITY as FIND_CAPABILITY
from glove_mcp.discovery.capability import MCP_PICKER as MCP_PICKER
from glove_mcp.discovery.capability import DiscoveryEntry as DiscoveryEntry
from glove_mcp.discovery.capability import DiscoveryMount as DiscoveryMount
from glove_mcp.discovery.capability import discovery_tool as discovery_tool
from glove_mcp.discovery.index import CatalogueIndex as CatalogueIndex
from glove_mcp.discovery.index import CatalogueItem as CatalogueItem
from glove_mcp.discovery.index import match_entries as match_entries
from glove_mcp.discovery.prompts import DEFAULT_CATALOGUE_BUDGET as DEFAULT_CATALOGUE_BUDGET
from glove_mcp.discovery.prompts import compact_catalogue as compact_catalogue
from glove_mcp.discovery.prompts import policy_prompt as policy_prompt

__all__ = [
    "DEFAULT_CATALOGUE_BUDGET",
    "FIND_CAPABILITY",
    "MCP_PICKER",
    "CatalogueIndex",
    "CatalogueItem",
    "DiscoveryEntry",
    "DiscoveryMount",
    "compact_catalogue",
    "discovery_tool",
    "match_entries",
    "policy_prompt",
]
