"""Where a Glove's tools come from: its tool sources, asked in order before every model call.

The Glove's own folded tools are the first source, the subagent dispatch tool the second, and
``Glove.add_tool_source`` appends others (an MCP mount). A name offered by two sources is an
error, raised where it is found: ``fold`` checks every source, the listing checks again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from glove_core._deferral import ToolPrefix
from glove_core.errors import ToolNameConflictError
from glove_core.tools import JoiningToolSource, Tool, ToolSource

__all__ = ["FoldedTools", "ToolSources"]


class FoldedTools:
    """The tools folded into one Glove, in the order they were folded."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def get_tools(self) -> list[Tool]:
        return list(self._tools.values())

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def pop(self, name: str) -> Tool:
        """Remove and return the tool called ``name``.

        Raises:
            KeyError: no tool has that name.
        """
        try:
            return self._tools.pop(name)
        except KeyError:
            raise KeyError(f"no tool named {name!r} is folded into this Glove") from None


class ToolSources:
    """The tool sources of one Glove, asked in order, and ``prefix``: which of their tools are
    ordinary, deferred or pending (``glove_core._deferral``), kept across requests."""

    def __init__(self, *sources: ToolSource) -> None:
        self._sources: list[ToolSource] = list(sources)
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

        def remove() -> None:
            self._sources[:] = [s for s in self._sources if s is not source]

        return remove

    def get_tools(self) -> list[Tool]:
        """Every source's tools, in source order.

        Raises:
            ToolNameConflictError: two sources offer a tool of the same name.
        """
        tools: list[Tool] = []
        owner: dict[str, ToolSource] = {}
        for source in self._sources:
            for tool in source.get_tools():
                first = owner.setdefault(tool.name, source)
                if first is not source:
                    raise ToolNameConflictError(tool.name, sources=(first, source))
                tools.append(tool)
        return tools

    def joined(self) -> set[str]:
        """Names of tools that joined mid-conversation, as their sources say
        (``JoiningToolSource``)."""
        names: set[str] = set()
        for source in self._sources:
            if isinstance(source, JoiningToolSource):
                names.update(source.joined_tools())
        return names

    @property
    def may_join(self) -> bool:
        """Whether a source may add tools mid-conversation."""
        return any(isinstance(s, JoiningToolSource) for s in self._sources)

    def by_name(self) -> dict[str, Tool]:
        """The tools offered now, by name."""
        return {t.name: t for t in self.get_tools()}

    def names(self) -> set[str]:
        """The names of the tools offered now."""
        return {t.name for s in self._sources for t in s.get_tools()}

    def check_new(self, names: Sequence[str]) -> None:
        """Raise ``ToolNameConflictError`` if a source already offers one of ``names``."""
        taken = self.names()
        for name in names:
            if name in taken:
                raise ToolNameConflictError(name)
