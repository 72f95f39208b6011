"""The headless server with its chat page at http://127.0.0.1:8765/ (GLOVE_API_KEY is the key
clients and the page send); sessions are kept in SQLite and survive a restart."""

import sys

from glove_mcp.programs import run_server

sys.exit(run_server(web=True))
