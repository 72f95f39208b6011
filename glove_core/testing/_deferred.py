"""What the fake Messages API does with deferred tools, as the API documents it.

Sources: platform.claude.com, "Tool search tool" (custom tool search, error handling) and
"Tool use with prompt caching" (defer_loading and cache preservation):

- a tool declared ``defer_loading: true`` is not part of the cached prefix; its definition is
  loaded where a ``tool_reference`` block in a ``tool_result`` names it, so the model can call it
  from then on;
- a request whose every tool is deferred is a 400: "All tools have defer_loading set. At least
  one tool must be non-deferred.";
- a reference to a tool with no deferred definition is a 400: "Tool reference '<name>' has no
  corresponding tool definition".

The model never sees a deferred tool nothing references, so it cannot call one: a scripted
reply that does is a mistake in the test, reported as such.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DeferredToolScriptError",
    "check_deferred",
    "deferred_definitions",
    "expand_references",
    "loaded_tools",
]


class DeferredToolScriptError(Exception):
    """A scripted reply calls a deferred tool that no ``tool_reference`` loaded: the real model
    could not see it."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"the fake's script calls tool {name!r}, which is declared defer_loading and no "
            "tool_reference in the request loads it: the real model cannot see that tool"
        )


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = body.get("tools")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


def deferred_definitions(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The deferred tools of a request, by name."""
    return {str(t.get("name")): t for t in _tools(body) if t.get("defer_loading") is True}


def _references(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            for part in inner if isinstance(inner, list) else []:
                if isinstance(part, dict) and part.get("type") == "tool_reference":
                    names.append(str(part.get("tool_name")))
    return names


def check_deferred(body: dict[str, Any]) -> str | None:
    """The API's 400 message for a request's deferred tools and references, or None."""
    tools = _tools(body)
    deferred = deferred_definitions(body)
    if tools and len(deferred) == len(tools):
        return "All tools have defer_loading set. At least one tool must be non-deferred."
    for name in _references(body):
        if name not in deferred:
            return f"Tool reference '{name}' has no corresponding tool definition"
    return None


def loaded_tools(body: dict[str, Any]) -> set[str]:
    """The tools the model can call: the ordinary ones and the deferred ones referenced."""
    ordinary = {str(t.get("name")) for t in _tools(body) if t.get("defer_loading") is not True}
    return ordinary | (set(_references(body)) & set(deferred_definitions(body)))


def expand_references(block: Any, definitions: dict[str, dict[str, Any]]) -> Any:
    """``block`` with each ``tool_reference`` in a ``tool_result`` carrying the definition it
    loads, so the cache imitation counts (and hashes) the definition where the API inlines it."""
    if not definitions or not isinstance(block, dict) or block.get("type") != "tool_result":
        return block
    inner = block.get("content")
    if not isinstance(inner, list) or not any(
        isinstance(p, dict) and p.get("type") == "tool_reference" for p in inner
    ):
        return block
    expanded = [
        {**p, "definition": definitions.get(str(p.get("tool_name")))}
        if isinstance(p, dict) and p.get("type") == "tool_reference"
        else p
        for p in inner
    ]
    return {**block, "content": expanded}
