"""Run a local test MCP server: ``python -m glove_mcp.testing notes [--token T] [--latency S]``.

Prints the URL on the first line of stdout, then serves until stdin closes or the process is
terminated.
"""

from glove_mcp.testing.process import main

if __name__ == "__main__":
    raise SystemExit(main())
