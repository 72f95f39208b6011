"""The headless HTTP server (``HeadlessServer``): routes, sessions, streams, limits and the web
page. It imports ``glove_core`` and nothing of MCP."""

from glove_mcp.server.app import ACCESS_LOGGER as ACCESS_LOGGER
from glove_mcp.server.app import AgentFactory as AgentFactory
from glove_mcp.server.app import ConnectionService as ConnectionService
from glove_mcp.server.app import HeadlessServer as HeadlessServer
from glove_mcp.server.app import HttpLimits as HttpLimits
from glove_mcp.server.app import SessionStore as SessionStore
from glove_mcp.server.app import uvicorn_config as uvicorn_config

__all__ = [
    "ACCESS_LOGGER",
    "AgentFactory",
    "ConnectionService",
    "HeadlessServer",
    "HttpLimits",
    "SessionStore",
    "uvicorn_config",
]
