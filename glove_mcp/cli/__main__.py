"""``python -m glove_mcp.cli``: the ``glove-mcp`` command."""

import sys

from glove_mcp.cli.main import main

sys.exit(main())
