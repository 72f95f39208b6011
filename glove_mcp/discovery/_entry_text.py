"""What ranking reads of an entry beyond its protocol: keywords, tools, and one text per entry
for plugged-in rankers; with the checks that turn bad values into clear errors."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

__all__ = ["ToolInfo", "digest", "entry_keywords", "entry_text", "string_list", "tool_pairs"]


class ToolInfo(Protocol):
    """A tool as discovery learns it: ``LearnedTool`` is one."""

    @property
    def name(self) -> str:
        """The tool's name (bare or namespaced ``id__tool``)."""
        ...

    @property
    def description(self) -> str:
        """What the tool does."""
        ...


def string_list(values: Iterable[str], what: str) -> list[str]:
    """``values`` as a list, refusing a bare string and non-strings.

    Raises:
        TypeError: naming ``what``.
    """
    if isinstance(values, str | bytes):
        raise TypeError(f"{what} must be a list of strings, not a single string: wrap it in [...]")
    out = list(values)
    for value in out:
        if not isinstance(value, str):
            raise TypeError(f"{what} must hold strings, got {type(value).__name__} {value!r}")
    return out


def entry_keywords(entry: object, position: int) -> tuple[str, ...]:
    """The entry's optional ``keywords`` (an absent or None attribute means none).

    Raises:
        TypeError: ``keywords`` is not a list of strings (naming the entry).
    """
    value = getattr(entry, "keywords", None)
    if value is None:
        return ()
    try:
        return tuple(string_list(value, "keywords"))
    except TypeError as exc:
        raise TypeError(
            f"catalogue item {position} ({getattr(entry, 'id', '?')!r}): {exc}"
        ) from None


def tool_pairs(tools: Iterable[str | ToolInfo]) -> list[tuple[str, str]]:
    """``(name, description)`` for each tool given as a name or as a ``ToolInfo``.

    Raises:
        TypeError: ``tools`` is a single string, or holds something else.
    """
    if isinstance(tools, str | bytes):
        raise TypeError("names must be a list of strings, not a single string: wrap it in [...]")
    out: list[tuple[str, str]] = []
    for tool in tools:
        if isinstance(tool, str):
            out.append((tool, ""))
            continue
        name = getattr(tool, "name", None)
        description = getattr(tool, "description", None)
        if not isinstance(name, str) or not isinstance(description, str | None):
            raise TypeError(
                "names must hold strings or tools with a str name and description, got "
                f"{type(tool).__name__} {tool!r}"
            )
        out.append((name, description or ""))
    return out


class _Named(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def tags(self) -> Sequence[str]: ...


def entry_text(
    entry: _Named, keywords: Sequence[str], tools: Mapping[str, str], instructions: str = ""
) -> str:
    """One text of everything discovery knows of an entry, for rankers that read text: name,
    description, tags, keywords, tools, and last the server's instructions (when known)."""
    parts = [f"{entry.name}: {entry.description}".strip()]
    if entry.tags:
        parts.append("Tags: " + ", ".join(entry.tags) + ".")
    if keywords:
        parts.append("Keywords: " + ", ".join(keywords) + ".")
    if tools:
        described = [f"{n} ({d})" if d else n for n, d in tools.items()]
        parts.append("Tools: " + "; ".join(described) + ".")
    if instructions:
        parts.append("Instructions: " + " ".join(instructions.split()))
    return " ".join(parts)


def digest(strings: Iterable[str]) -> str:
    """A sha256 of the strings, each ended by a NUL (so boundaries count)."""
    h = hashlib.sha256()
    for s in strings:
        h.update(s.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()
