"""What a tool-list change mid-conversation costs, as the cache-health check reports it: a
deferred tool joining is no change to the cached prefix; an ordinary one is."""

from __future__ import annotations

import logging

import pytest

from glove_core import Message, ModelRequest, Usage
from glove_core.models._cache_health import CacheHealth
from glove_core.tools import ToolSpec

HI = [Message(sender="user", text="hi")]


def request(*names: str, deferred: frozenset[str] = frozenset()) -> ModelRequest:
    tools = [ToolSpec(n, n, {"type": "object"}) for n in names]
    return ModelRequest(
        system="s", tools=tools, messages=HI, conversation_id="c", deferred_tools=deferred
    )


def test_a_deferred_tool_joining_is_no_collapse_and_no_tool_change() -> None:
    health = CacheHealth(ttl_seconds=300)
    assert health.observe("m", request("a"), Usage(cache_write_tokens=10_000), 0.0) is None
    joined = request("a", "x", deferred=frozenset({"x"}))
    assert health.observe("m", joined, Usage(cache_read_tokens=10_000), 1.0) is None
    # Even a call that read little back is no tool change: deferred tools are not in the prefix.
    collapse = health.observe("m", joined, Usage(cache_read_tokens=0), 2.0)
    assert collapse is not None and "tool definitions" not in collapse.detail


def test_an_ordinary_tool_joining_reports_what_it_cost(caplog: pytest.LogCaptureFixture) -> None:
    health = CacheHealth(ttl_seconds=300)
    health.observe("m", request("a"), Usage(cache_write_tokens=10_000), 0.0)
    with caplog.at_level(logging.INFO, logger="glove_core.models._cache_health"):
        collapse = health.observe("m", request("a", "x"), Usage(cache_write_tokens=10_500), 1.0)
    assert collapse is not None
    assert (collapse.cause, collapse.detail) == ("unexpected", "the tool definitions changed")
    assert "changed mid-conversation: this call read 0 of 10000 established tokens" in caplog.text
