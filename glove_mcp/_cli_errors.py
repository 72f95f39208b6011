"""The ``glove-mcp`` command's own failure: one line, and the exit status to use."""

from __future__ import annotations

__all__ = ["CliError"]


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status
