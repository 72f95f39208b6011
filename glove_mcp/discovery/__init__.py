"""Discovery: finding the MCP server a need calls for, and switching it on mid-conversation.

- ``capability``: the ``find_capability`` subagent and its tools; ``prompts``: its prompts.
- ``index``: ranking a catalogue (``CatalogueIndex``, ``match_entries``), built on the private
  ``_ranking`` (BM25F), ``_text`` (words and Snowball stems), ``_typos`` (typing errors, with
  rapidfuzz), ``_entry_text`` (keywords, tools) and ``_index_cache`` (the index cache of
  ``match_entries`` over a list).
- ``ranker``: the ranking seam (``CatalogueRanker``, ``RankingRequest``, ``fuse_rankings``);
  ``semantic``: an embedding ranker on it (``SemanticRanker``; its default model needs the
  ``glove-agents[semantic]`` extra); ``default``: the default ranker (``DefaultRanker``: BM25F fused
  with ``static_embeddings``, WordLlama's word embeddings shipped in its wheel).
"""

from glove_mcp.discovery.capability import FIND_CAPABILITY as FIND_CAPABILITY
from glove_mcp.discovery.capability import MCP_PICKER as MCP_PICKER
from glove_mcp.discovery.capability import DiscoveryEntry as DiscoveryEntry
from glove_mcp.discovery.capability import DiscoveryMount as DiscoveryMount
from glove_mcp.discovery.capability import discovery_tool as discovery_tool
from glove_mcp.discovery.default import DefaultRanker as DefaultRanker
from glove_mcp.discovery.index import CatalogueIndex as CatalogueIndex
from glove_mcp.discovery.index import CatalogueItem as CatalogueItem
from glove_mcp.discovery.index import ToolInfo as ToolInfo
from glove_mcp.discovery.index import match_entries as match_entries
from glove_mcp.discovery.prompts import DEFAULT_CATALOGUE_BUDGET as DEFAULT_CATALOGUE_BUDGET
from glove_mcp.discovery.prompts import compact_catalogue as compact_catalogue
from glove_mcp.discovery.prompts import policy_prompt as policy_prompt
from glove_mcp.discovery.ranker import CatalogueRanker as CatalogueRanker
from glove_mcp.discovery.ranker import RankingRequest as RankingRequest
from glove_mcp.discovery.ranker import fuse_rankings as fuse_rankings
from glove_mcp.discovery.semantic import SemanticRanker as SemanticRanker

__all__ = [
    "DEFAULT_CATALOGUE_BUDGET",
    "FIND_CAPABILITY",
    "MCP_PICKER",
    "CatalogueIndex",
    "CatalogueItem",
    "CatalogueRanker",
    "DefaultRanker",
    "DiscoveryEntry",
    "DiscoveryMount",
    "RankingRequest",
    "SemanticRanker",
    "ToolInfo",
    "compact_catalogue",
    "discovery_tool",
    "fuse_rankings",
    "match_entries",
    "policy_prompt",
]
