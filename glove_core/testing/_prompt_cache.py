"""Prompt-cache imitation: prefix hashes at breakpoints, TTL entries, 20-block lookback.

The request is flattened into blocks in the order the real API caches them: tools, then system
blocks, then every message's content blocks. Each block's prefix hash chains the hashes of all
blocks before it, with ``cache_control`` removed (moving a breakpoint must not change a prefix).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from glove_core.testing._deferred import deferred_definitions, expand_references

__all__ = [
    "CacheResult",
    "FlatBlock",
    "PromptCacheSim",
    "estimate_tokens",
    "flatten_anthropic",
    "prefix_hashes",
]

LOOKBACK_BLOCKS = 20
"""How far back from a breakpoint a hit is looked for, as the real API does."""

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def estimate_tokens(value: Any) -> int:
    """Tokens of a JSON value, estimated at four characters a token (at least 1)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return max(1, len(text) // 4)


@dataclass(frozen=True)
class FlatBlock:
    """One cacheable unit: a tool, a system block or a message content block."""

    canonical: str
    """The block as sorted JSON without ``cache_control`` (what the hash covers)."""
    tokens: int
    ttl: str | None
    """The breakpoint's TTL when the block carries ``cache_control``, else None."""


def _strip_cache_control(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: _strip_cache_control(v) for k, v in block.items() if k != "cache_control"}
    if isinstance(block, list):
        return [_strip_cache_control(v) for v in block]
    return block


def _flat(block: Any, role: str | None = None) -> FlatBlock:
    ttl: str | None = None
    if isinstance(block, dict) and isinstance(block.get("cache_control"), dict):
        ttl = str(block["cache_control"].get("ttl") or "5m")
    bare = _strip_cache_control(block)
    canonical = json.dumps([role, bare], sort_keys=True, ensure_ascii=False)
    text_len = len(json.dumps(bare, sort_keys=True, ensure_ascii=False))
    return FlatBlock(canonical=canonical, tokens=max(1, text_len // 4), ttl=ttl)


def flatten_anthropic(body: dict[str, Any]) -> list[FlatBlock]:
    """The blocks of a Messages API request body, in cache order (tools → system → messages).

    Deferred tools (``defer_loading: true``) are not part of the prefix: each counts where a
    ``tool_reference`` in a tool result loads it, as the API inlines it there.
    """
    definitions = deferred_definitions(body)
    blocks = [
        _flat(tool, "tool")
        for tool in body.get("tools") or []
        if not (isinstance(tool, dict) and tool.get("defer_loading") is True)
    ]
    system = body.get("system")
    if isinstance(system, str):
        if system:
            blocks.append(_flat({"type": "text", "text": system}, "system"))
    elif isinstance(system, list):
        blocks.extend(_flat(b, "system") for b in system)
    for message in body.get("messages") or []:
        content = message.get("content")
        role = str(message.get("role"))
        if isinstance(content, str):
            blocks.append(_flat({"type": "text", "text": content}, role))
        else:
            blocks.extend(_flat(expand_references(b, definitions), role) for b in content or [])
    return blocks


def prefix_hashes(model: str, blocks: Iterable[FlatBlock]) -> list[str]:
    """The chained hash of every prefix ``blocks[: i + 1]`` (the model is part of the key)."""
    hashes: list[str] = []
    running = hashlib.sha256(model.encode()).hexdigest()
    for block in blocks:
        running = hashlib.sha256((running + block.canonical).encode()).hexdigest()
        hashes.append(running)
    return hashes


@dataclass(frozen=True)
class CacheResult:
    """What one request read from and wrote to the cache, in tokens."""

    input_tokens: int
    """Tokens neither read from nor written to the cache."""
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    creation_5m: int
    creation_1h: int
    hit_block: int | None
    """Index of the last block of the prefix that was read, or None on a miss."""

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


@dataclass
class PromptCacheSim:
    """The cache of one organisation: entries keyed by prefix hash, each with an expiry time.

    Args:
        clock: returns the current time in seconds (the fake's adjustable clock).
        min_tokens: prefixes shorter than this are never cached (1024 on most models).
        enabled: when False nothing is read or written (all input is uncached).
    """

    clock: Callable[[], float]
    min_tokens: int = 1024
    enabled: bool = True
    entries: dict[str, float] = field(default_factory=dict)

    def process(self, model: str, blocks: list[FlatBlock]) -> CacheResult:
        """Look up and write the breakpoints of one request, and account for its tokens."""
        now = self.clock()
        self.entries = {h: exp for h, exp in self.entries.items() if exp > now}
        total = sum(b.tokens for b in blocks)
        breakpoints = [i for i, b in enumerate(blocks) if b.ttl is not None]
        if not self.enabled or not breakpoints:
            return CacheResult(total, 0, 0, 0, 0, None)
        hashes = prefix_hashes(model, blocks)
        cumulative: list[int] = []
        running = 0
        for block in blocks:
            running += block.tokens
            cumulative.append(running)

        hit: int | None = None
        for bp in breakpoints:
            for j in range(bp, max(-1, bp - LOOKBACK_BLOCKS), -1):
                if hashes[j] in self.entries:
                    if hit is None or j > hit:
                        hit = j
                    break
        read = cumulative[hit] if hit is not None else 0
        if hit is not None:
            ttl = blocks[hit].ttl or _ttl_of_entry(blocks, hit, breakpoints)
            self.entries[hashes[hit]] = max(self.entries[hashes[hit]], now + TTL_SECONDS[ttl])

        created = {"5m": 0, "1h": 0}
        previous = read
        for bp in breakpoints:
            if hit is not None and bp <= hit:
                continue
            if cumulative[bp] < self.min_tokens:
                continue
            ttl = blocks[bp].ttl or "5m"
            self.entries[hashes[bp]] = now + TTL_SECONDS.get(ttl, 300.0)
            created[ttl if ttl in created else "5m"] += cumulative[bp] - previous
            previous = cumulative[bp]
        creation = created["5m"] + created["1h"]
        return CacheResult(
            input_tokens=total - read - creation,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=creation,
            creation_5m=created["5m"],
            creation_1h=created["1h"],
            hit_block=hit,
        )


def _ttl_of_entry(blocks: list[FlatBlock], hit: int, breakpoints: list[int]) -> str:
    # A hit found by lookback sits where an earlier request had its breakpoint; refresh it with
    # the TTL of the nearest breakpoint of this request that covers it.
    for bp in breakpoints:
        if bp >= hit:
            return blocks[bp].ttl or "5m"
    return "5m"
