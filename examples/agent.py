"""A terminal agent on your catalogue (servers.toml in ~/.config/glove) with stored OAuth tokens:
it finds servers as it needs them; `--session ID` resumes a conversation."""

import sys

from glove_mcp.programs import run_chat

sys.exit(run_chat())
