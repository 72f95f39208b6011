"""Where a credential is kept: by principal and by the resource it was issued for.

Standard library only, so ``glove-mcp status`` can compute keys without importing the OAuth
package. ``canonical_resource`` is the RFC 8707 canonical form the mcp SDK sends as
``resource`` (lower-case scheme and host, no fragment), so a stored state's ``resource``
and its key agree.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit, urlunsplit

__all__ = ["DEFAULT_PRINCIPAL", "canonical_resource", "credential_key", "same_resource"]

DEFAULT_PRINCIPAL = "default"
"""The principal of the command (``glove-mcp auth``, ``chat``) and of ``GLOVE_API_KEY``."""


def canonical_resource(url: str) -> str:
    """The RFC 8707 canonical form of a server URL (lower-case scheme and host, no fragment).

    Args:
        url: an MCP server URL.
    """
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def credential_key(principal: str, server_url: str) -> str:
    """The store key of ``principal``'s credential for the server at ``server_url``.

    The principal is percent-encoded, so no name can forge another's key, and the resource
    follows the first ``@``: ``default@https://mcp.example.com/mcp``.

    Args:
        principal: the principal's name.
        server_url: the server URL the credential is (to be) issued for.
    """
    return f"{quote(principal, safe='')}@{canonical_resource(server_url)}"


def same_resource(stored_url: str | None, server_url: str) -> bool:
    """Whether a credential issued for ``stored_url`` may be sent to ``server_url``: only when
    both name the same resource. A credential that records no URL is never sent (its
    binding cannot be known, so it is not guessed)."""
    return stored_url is not None and canonical_resource(stored_url) == canonical_resource(
        server_url
    )
