"""Test doubles shipped with glove_mcp: local MCP servers over Streamable HTTP.

``serve("notes")`` / ``McpTestServer`` run a Notion-like notes server, a Linear-like tracker
server a paginating server or a server of answers as large as asked (``build_sizes_server``)
in-process on 127.0.0.1 (``build_docs_server``: resources and
prompts); ``ServerControl`` makes them slow or fail;
``spawn_server`` runs one as a subprocess (``python -m glove_mcp.testing notes``), and
``spawn_servers`` several in one child process.
"""

from glove_mcp.testing.docs_server import build_docs_server as build_docs_server
from glove_mcp.testing.harness import McpTestServer as McpTestServer
from glove_mcp.testing.harness import ServerControl as ServerControl
from glove_mcp.testing.harness import ServerKind as ServerKind
from glove_mcp.testing.harness import build_server as build_server
from glove_mcp.testing.harness import serve as serve
from glove_mcp.testing.oauth_server import LocalAuthProvider as LocalAuthProvider
from glove_mcp.testing.oauth_server import OAuthServerCounters as OAuthServerCounters
from glove_mcp.testing.oauth_server import OAuthTestServer as OAuthTestServer
from glove_mcp.testing.oauth_server import serve_oauth_server as serve_oauth_server
from glove_mcp.testing.process import spawn_server as spawn_server
from glove_mcp.testing.process import spawn_servers as spawn_servers
from glove_mcp.testing.servers import build_notes_server as build_notes_server
from glove_mcp.testing.servers import build_paged_server as build_paged_server
from glove_mcp.testing.servers import build_tracker_server as build_tracker_server
from glove_mcp.testing.sizes_server import build_sizes_server as build_sizes_server

__all__ = [
    "LocalAuthProvider",
    "McpTestServer",
    "OAuthServerCounters",
    "OAuthTestServer",
    "ServerControl",
    "ServerKind",
    "build_docs_server",
    "build_notes_server",
    "build_paged_server",
    "build_server",
    "build_sizes_server",
    "build_tracker_server",
    "serve",
    "serve_oauth_server",
    "spawn_server",
    "spawn_servers",
]
