"""Prompt-cache health: notice when a call reads back far less than the conversation had cached.

After each call the prefix the conversation has established is what that call read plus what
it wrote. The next call should read at least that much back; when it misses a lot, the cause is
idling past the TTL, a compaction that rewrote history, tool results of the previous user turn
now sent as summaries, or a bug that moved the prefix.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field

from glove_core.models.base import ModelRequest
from glove_core.subscribers import CacheCollapse, CacheCollapseKind
from glove_core.types import Usage

__all__ = ["CacheHealth", "conversation_key"]

logger = logging.getLogger(__name__)


@dataclass
class _Seen:
    established: int
    at: float
    compaction: str | None
    system: str
    tools: str
    summarized: int


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def conversation_key(request: ModelRequest) -> str:
    """Which conversation a request belongs to: its id, else its system prompt."""
    return request.conversation_id or f"system:{_digest(request.system)}"


def _compaction_marker(request: ModelRequest) -> str | None:
    for message in reversed(request.messages):
        if message.is_compaction:
            return message.id
    return None


@dataclass
class CacheHealth:
    """Per-conversation memory of the established cache prefix.

    Args:
        ttl_seconds: the cache TTL the adapter writes with.
        min_missed_tokens: a smaller shortfall is noise, not a collapse (default 2,000).
        min_missed_fraction: the shortfall must also exceed this share of the established
            prefix (default 0.05).
        max_conversations: how many conversations are remembered (the idlest is forgotten).
    """

    ttl_seconds: float
    min_missed_tokens: int = 2000
    min_missed_fraction: float = 0.05
    max_conversations: int = 1000
    _seen: dict[str, _Seen] = field(default_factory=dict, init=False, repr=False)

    def observe(
        self, model: str, request: ModelRequest, usage: Usage, now: float
    ) -> CacheCollapse | None:
        """Record one call's usage; return a CacheCollapse when it read back far too little."""
        key = conversation_key(request)
        # Deferred tools are not part of the cached prefix: one joining changes nothing there.
        specs = [
            [t.name, t.description, t.input_schema]
            for t in request.tools
            if t.name not in request.deferred_tools
        ]
        tools = _digest(json.dumps(specs, sort_keys=True))
        seen = _Seen(
            established=usage.cache_read_tokens + usage.cache_write_tokens,
            at=now,
            compaction=_compaction_marker(request),
            system=_digest(request.system),
            tools=tools,
            summarized=request.summarized,
        )
        before = self._seen.pop(key, None)
        self._seen[key] = seen
        if before is not None and before.tools != seen.tools:
            # Every change to the tool list mid-conversation says what it cost the cache.
            logger.info(
                "the tool definitions of %s changed mid-conversation: this call read %d of %d "
                "established tokens from the cache and wrote %d",
                model,
                usage.cache_read_tokens,
                before.established,
                usage.cache_write_tokens,
            )
        if len(self._seen) > self.max_conversations:
            # Forget the conversation idle the longest (dicts keep insertion order).
            del self._seen[next(iter(self._seen))]
        if before is None or before.established <= 0:
            return None
        missed = before.established - usage.cache_read_tokens
        threshold = self.min_missed_fraction * before.established
        if missed < self.min_missed_tokens or missed <= threshold:
            return None
        idle = now - before.at
        kind: CacheCollapseKind
        detail = ""
        if idle > self.ttl_seconds:
            kind = "ttl_expired"
            detail = f"idle {idle:.0f}s, longer than the {self.ttl_seconds:.0f}s cache TTL"
        elif seen.compaction != before.compaction:
            kind = "compacted"
            detail = "a compaction summary replaced the history since the previous call"
        elif seen.summarized > before.summarized:
            kind = "summaries"
            detail = (
                "a new user turn: tool results of the previous turn are now sent as summaries "
                "(once per user turn)"
            )
        else:
            kind = "unexpected"
            if seen.tools != before.tools:
                detail = "the tool definitions changed"
            elif seen.system != before.system:
                detail = "the system prompt changed"
            else:
                detail = (
                    "the cached prefix moved: saved history was rewritten, or more than 20 "
                    "blocks were added since the previous breakpoint"
                )
            logger.warning(
                "prompt cache collapsed unexpectedly for %s: read %d of %d established tokens (%s)",
                model,
                usage.cache_read_tokens,
                before.established,
                detail,
            )
        return CacheCollapse(
            cause=kind,
            model=model,
            established_tokens=before.established,
            read_tokens=usage.cache_read_tokens,
            idle_seconds=idle,
            detail=detail,
        )
