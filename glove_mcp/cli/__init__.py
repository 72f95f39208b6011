"""The ``glove-mcp`` command: one module per command, and the pieces they share."""

from glove_mcp.cli.main import main

__all__ = ["main"]
