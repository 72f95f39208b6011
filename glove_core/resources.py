"""``AsyncResource``: an abstract ``aclose()`` and the async context manager that calls it.

Whatever owns a socket, a task, a process or a file derives from it, in glove_core and
glove_mcp alike (as in anyio's ``abc.AsyncResource``): ``async with resource:`` opens it where
opening means something (``_enter``) and closes it on the way out; ``aclose()`` is idempotent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["AsyncResource"]


class AsyncResource(ABC):
    """Something to close: ``aclose()`` (idempotent), or ``async with`` around its use."""

    __slots__ = ()

    async def __aenter__(self) -> Self:
        await self._enter()
        return self

    async def _enter(self) -> None:
        """What entering does before the body runs (open a file, connect); nothing here."""
        return None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    @abstractmethod
    async def aclose(self) -> None:
        """Release what this object owns. Idempotent."""
