"""``AsyncResource``: an abstract ``aclose()`` and the async context manager that calls it.

Whatever owns a socket, a task or a file derives from it (as in anyio's ``abc.AsyncResource``):
``async with resource:`` closes it on the way out, and ``aclose()`` is idempotent.
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
        return self

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
