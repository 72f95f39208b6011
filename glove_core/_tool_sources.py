"""Where a Glove's tools come from: its tool sources, asked in order before every model call.

The Glove's own folded tools are the first source, the subagent dispatch tool the second, and
``Glove.add_tool_source`` appends others (an MCP mount). A name offered by two sources is an
error, raised where it is found: ``fold`` checks every source, the listing checks again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from glove_core._deferral import ToolPrefix
from glove_core.errors import ToolNameConflictError
from glove_core.tools import AppToolSource, JoiningToolSource, Tool, ToolSource

__all__ = ["FoldedTools", "ToolSources"]


class FoldedTools:
    """The tools folded into one Glove, in the order they were folded."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        # The same tuple until the next fold or unfold, so ``ToolSources`` sees at a glance
        # that nothing changed (it is asked before every model call).
        self._listing: tuple[Tool, ...] = ()

    def get_tools(self) -> tuple[Tool, ...]:
        return self._listing

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool
        self._listing = tuple(self._tools.values())

    def pop(self, name: str) -> Tool:
        """Remove and return the tool called ``name``.

        Raises:
            KeyError: no tool has that name.
        """
        try:
            tool = self._tools.pop(name)
        except KeyError:
            raise KeyError(f"no tool named {name!r} is folded into this Glove") from None
        self._listing = tuple(self._tools.values())
        return tool


@dataclass(frozen=True)
class _Listing:
    """What every source offered at one moment, and what the loop derives from it."""

    offered: tuple[tuple[Tool, ...], ...]
    """Each source's tools, as it returned them (compared with the next answer)."""
    tools: tuple[Tool, ...]
    by_name: Mapping[str, Tool]


class ToolSources:
    """The tool sources of one Glove, asked in order, and ``prefix``: which of their tools are
    ordinary, deferred or pending (``glove_core._deferral``), kept across requests."""

    def __init__(self, *sources: ToolSource) -> None:
        self._sources: list[ToolSource] = list(sources)
        # isinstance() against a runtime-checkable protocol inspects the class's attributes
        # each time (tens of microseconds): asked once per source, when it is added.
        self._joining: list[JoiningToolSource] = [
            s for s in sources if isinstance(s, JoiningToolSource)
        ]
        self._listing: _Listing | None = None
        self.prefix = ToolPrefix()

    def add(self, source: ToolSource) -> Callable[[], None]:
        """Append ``source``; returns a function that removes it again."""
        if not isinstance(source, ToolSource):
            raise TypeError(
                f"add_tool_source() takes an object with get_tools() -> Sequence[Tool], "
                f"got {source!r}"
            )
        if any(s is source for s in self._sources):
            raise ValueError(f"{source!r} is already a tool source of this Glove")
        self._sources.append(source)
        if isinstance(source, JoiningToolSource):
            self._joining.append(source)

        def remove() -> None:
            self._sources[:] = [s for s in self._sources if s is not source]
            self._joining[:] = [j for j in self._joining if j is not cast(object, source)]

        return remove

    def get_tools(self) -> list[Tool]:
        """Every source's tools, in source order (a new list, the caller's to change).

        Raises:
            ToolNameConflictError: two sources offer a tool of the same name.
        """
        return list(self.listing())

    def listing(self) -> tuple[Tool, ...]:
        """Every source's tools, in source order: the same tuple as long as every source
        offers the same tools, so what is derived from it can be kept per change.

        Raises:
            ToolNameConflictError: two sources offer a tool of the same name.
        """
        return self._current().tools

    def _current(self) -> _Listing:
        # Every source is still asked (what it offers may change between calls); comparing
        # its answer with the last one is a C-level identity check per tool, much cheaper
        # than rebuilding the list, the name map and the conflict check on every call.
        offered = tuple([tuple(s.get_tools()) for s in self._sources])
        known = self._listing
        if known is not None and known.offered == offered:
            return known
        tools: list[Tool] = []
        owner: dict[str, int] = {}
        for index, source_tools in enumerate(offered):
            for tool in source_tools:
                first = owner.setdefault(tool.name, index)
                if first != index:
                    raise ToolNameConflictError(
                        tool.name, sources=(self._sources[first], self._sources[index])
                    )
                tools.append(tool)
        listing = _Listing(offered, tuple(tools), {t.name: t for t in tools})
        self._listing = listing
        return listing

    def joined(self) -> set[str]:
        """Names of tools that joined mid-conversation, as their sources say
        (``JoiningToolSource``)."""
        names: set[str] = set()
        for source in self._joining:
            names.update(source.joined_tools())
        return names

    @property
    def may_join(self) -> bool:
        """Whether a source may add tools mid-conversation."""
        return bool(self._joining)

    def by_name(self) -> Mapping[str, Tool]:
        """The tools offered now, by name (kept while they stay the same: read it only)."""
        return self._current().by_name

    def app_tool(self, name: str) -> Tool | None:
        """The application-only tool ``name`` of a source (``AppToolSource``), or None."""
        for source in self._sources:
            if isinstance(source, AppToolSource):
                found = source.app_tools().get(name)
                if found is not None:
                    return found
        return None

    def names(self) -> set[str]:
        """The names of the tools offered now."""
        return {t.name for s in self._sources for t in s.get_tools()}

    def check_new(self, names: Sequence[str]) -> None:
        """Raise ``ToolNameConflictError`` if a source already offers one of ``names``."""
        taken = self.names()
        for name in names:
            if name in taken:
                raise ToolNameConflictError(name)
