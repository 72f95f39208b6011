"""glove_mcp.oauth exports every name DESIGN.md fixes, under a sorted __all__."""

from __future__ import annotations

import glove_mcp.oauth

FIXED = {
    "FsOAuthStore",
    "KeyringOAuthStore",
    "MCP_DEFAULT_CLIENT_INFO",
    "McpOAuthProvider",
    "MemoryOAuthStore",
    "OAuthStore",
    "OAuthTokenSource",
    "build_client_metadata",
    "empty_oauth_state",
    "run_mcp_oauth",
}


def test_oauth_exports() -> None:
    exported = list(glove_mcp.oauth.__all__)
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))
    assert set(exported) >= FIXED
    for name in exported:
        assert hasattr(glove_mcp.oauth, name)
