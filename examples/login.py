"""Log in to a server of your catalogue once: `python examples/login.py linear`; the agent
and the server then reuse the stored tokens and refresh them."""

import sys

from glove_mcp.programs import run_login

sys.exit(run_login(sys.argv[1], argv=sys.argv[2:]))
