"""OAuth for MCP servers: log in once (``run_mcp_oauth``), keep tokens in a store, and hand
out valid access tokens that refresh silently (``OAuthTokenSource``).

Example:
    >>> store = FsOAuthStore("~/.config/glove/oauth.json")  # doctest: +SKIP
    >>> await run_mcp_oauth("https://mcp.notion.com/mcp", store, "notion")  # doctest: +SKIP
    >>> source = OAuthTokenSource(store, "notion")  # doctest: +SKIP
    >>> token = await source.access_token()  # doctest: +SKIP
"""

from glove_mcp.oauth.binding import BoundLogin as BoundLogin
from glove_mcp.oauth.binding import LoginCheck as LoginCheck
from glove_mcp.oauth.binding import canonical_resource as canonical_resource
from glove_mcp.oauth.binding import credential_key as credential_key
from glove_mcp.oauth.connections import Connections as Connections
from glove_mcp.oauth.fs_store import FsOAuthStore as FsOAuthStore
from glove_mcp.oauth.keyring_store import KeyringOAuthStore as KeyringOAuthStore
from glove_mcp.oauth.login import OAuthResult as OAuthResult
from glove_mcp.oauth.login import VerifyToolCall as VerifyToolCall
from glove_mcp.oauth.login import run_mcp_oauth as run_mcp_oauth
from glove_mcp.oauth.machine import client_credentials_auth as client_credentials_auth
from glove_mcp.oauth.machine import identity_assertion_auth as identity_assertion_auth
from glove_mcp.oauth.provider import Authorizer as Authorizer
from glove_mcp.oauth.provider import McpOAuthProvider as McpOAuthProvider
from glove_mcp.oauth.state import MCP_DEFAULT_CLIENT_INFO as MCP_DEFAULT_CLIENT_INFO
from glove_mcp.oauth.state import OAuthClientInfo as OAuthClientInfo
from glove_mcp.oauth.state import OAuthState as OAuthState
from glove_mcp.oauth.state import StoredTokens as StoredTokens
from glove_mcp.oauth.state import build_client_metadata as build_client_metadata
from glove_mcp.oauth.state import empty_oauth_state as empty_oauth_state
from glove_mcp.oauth.store import LockingOAuthStore as LockingOAuthStore
from glove_mcp.oauth.store import MemoryOAuthStore as MemoryOAuthStore
from glove_mcp.oauth.store import OAuthStore as OAuthStore
from glove_mcp.oauth.token_source import OAuthTokenSource as OAuthTokenSource
from glove_mcp.oauth.token_source import RevocationOutcome as RevocationOutcome
from glove_mcp.oauth.url_policy import OAuthUrlRefusedError as OAuthUrlRefusedError
from glove_mcp.oauth.url_policy import UrlPolicy as UrlPolicy

__all__ = [
    "MCP_DEFAULT_CLIENT_INFO",
    "Authorizer",
    "BoundLogin",
    "Connections",
    "FsOAuthStore",
    "KeyringOAuthStore",
    "LockingOAuthStore",
    "LoginCheck",
    "McpOAuthProvider",
    "MemoryOAuthStore",
    "OAuthClientInfo",
    "OAuthResult",
    "OAuthState",
    "OAuthStore",
    "OAuthTokenSource",
    "OAuthUrlRefusedError",
    "RevocationOutcome",
    "StoredTokens",
    "UrlPolicy",
    "VerifyToolCall",
    "build_client_metadata",
    "canonical_resource",
    "client_credentials_auth",
    "credential_key",
    "empty_oauth_state",
    "identity_assertion_auth",
    "run_mcp_oauth",
]
