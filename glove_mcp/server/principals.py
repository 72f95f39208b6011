"""``Principal``: who a request to the headless server acts for.

Every authenticated request carries one as ``request.state.principal``; sessions and MCP
credentials belong to it. ``GLOVE_API_KEY`` alone is the principal ``default``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Principal"]


@dataclass(frozen=True)
class Principal:
    """An authenticated caller of the headless server.

    Attributes:
        name: the principal's name (a keys-file entry, a JWT subject, ``default``).
        scopes: what it may do beyond its own sessions (``admin``: every session).
    """

    name: str
    scopes: frozenset[str] = field(default_factory=frozenset)
