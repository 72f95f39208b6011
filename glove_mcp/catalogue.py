"""The catalogue: a static list of the MCP servers an application supports.

Ranking it (``match_entries``, ``CatalogueIndex``) is discovery's business and lives in
``glove_mcp.discovery.index``; both names are re-exported here, where they have always been.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from glove_mcp.discovery.index import CatalogueIndex as CatalogueIndex
from glove_mcp.discovery.index import CatalogueItem as CatalogueItem
from glove_mcp.discovery.index import match_entries as match_entries

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_KEYWORDS",
    "MAX_KEYWORD_LENGTH",
    "CatalogueIndex",
    "CatalogueItem",
    "McpCatalogueEntry",
    "check_call_timeout",
    "match_entries",
]

# fullmatch: "$" would accept a final newline.
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

MAX_KEYWORDS = 64
"""The most keywords one catalogue entry may carry."""

MAX_KEYWORD_LENGTH = 100
"""The longest keyword, in characters."""

MAX_ID_LENGTH = 40
"""The longest catalogue id: bridged names (at most 64 characters) keep ``<id>__`` whole and
room for the tool's name after it."""


def check_call_timeout(
    value: object, field: str = "call_timeout", *, none_means: str = "None for no limit"
) -> None:
    """Refuse a timeout that is not None or a positive, finite number of seconds.

    Raises:
        ValueError: naming ``field``, the value and what is allowed (``none_means`` says
            what None does where it is checked).
    """
    if value is None:
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and 0 < value < math.inf):  # type: ignore[operator]
        raise ValueError(
            f"{field} must be a positive, finite number of seconds (or {none_means}), got {value!r}"
        )


class McpCatalogueEntry(BaseModel):
    """One MCP server the application supports; identical for every user.

    Args:
        id: the activation key and the tool namespace (``id__tool``): letters, digits, ``-``
            and ``_``, starting with a letter or digit, at most ``MAX_ID_LENGTH`` (40)
            characters, with no ``__`` (the namespace separator) and not ending in ``_``. So
            the first ``__`` of a bridged name always ends the id, and two servers' tools
            never share a name (ids ``a`` and ``a_`` would both give ``a___b``, for tools
            ``_b`` and ``b``).
        name: a human name, e.g. "Notion".
        description: what the server can do; discovery ranks on it.
        url: the Streamable HTTP endpoint, an ``http://`` or ``https://`` URL (leave it empty
            for a stdio server).
        tags: categories, for discovery and tag filters.
        keywords: words and short phrases people use for what this server does, written by
            the catalogue's author ("bug", "ticket", "sprint" for an issue tracker); discovery
            ranks on them with their own weight, as on tags. Non-empty strings, at most
            ``MAX_KEYWORDS`` of them, each at most ``MAX_KEYWORD_LENGTH`` characters.
        exclude_tools: server tool names (un-namespaced) never offered to the model.
        metadata: free-form data for the application.
        command: for a local stdio server instead of ``url``: the command that starts it,
            e.g. ``["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]``.
        env: extra environment variables for that command.
        protocol: ``"auto"`` (the stateless protocol when the server speaks it, else the
            ``initialize`` handshake) or ``"legacy"`` (the handshake only, for a server that
            mishandles ``server/discover``).
        allow_sampling: whether this server may ask the agent's model for a completion
            (``sampling/createMessage``); None (the default) leaves it to ``mount_mcp``'s
            ``allow_sampling``.
        call_timeout: seconds one request to this server (a tool call, a listing) may take
            before the call fails with an error naming the server and the timeout; a positive,
            finite number. None (the default) leaves it to ``mount_mcp``'s ``call_timeout``
            (300 s unless changed).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    description: str
    url: str = ""
    tags: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    exclude_tools: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    command: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    protocol: Literal["auto", "legacy"] = "auto"
    allow_sampling: bool | None = None
    call_timeout: float | None = None

    @model_validator(mode="after")
    def _check_transport(self) -> McpCatalogueEntry:
        if bool(self.url) == bool(self.command):
            raise ValueError(
                f"catalogue entry {self.id!r} needs exactly one of url (a Streamable HTTP "
                "server) or command (a stdio server)"
            )
        return self

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        if not value:
            return value
        try:
            parts = urlsplit(value)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:  # e.g. an unclosed IPv6 bracket
            usable = False
        if not usable or value != value.strip():
            raise ValueError(
                f"{value[:200]!r} is not an http:// or https:// URL (a Streamable HTTP "
                "endpoint such as https://mcp.example.com/mcp); for a local server give "
                "command instead"
            )
        return value

    @field_validator("command")
    @classmethod
    def _check_command(cls, value: list[str]) -> list[str]:
        if value and not value[0].strip():
            raise ValueError("command must start with the program to run, not an empty string")
        return value

    @field_validator("call_timeout", mode="before")
    @classmethod
    def _check_call_timeout(cls, value: object) -> object:
        check_call_timeout(value, none_means="left out to use the mount's")
        return value

    @field_validator("keywords")
    @classmethod
    def _check_keywords(cls, value: list[str]) -> list[str]:
        if len(value) > MAX_KEYWORDS:
            raise ValueError(
                f"keywords holds {len(value)} items; at most {MAX_KEYWORDS} are allowed "
                "(keep the words people really use for this server)"
            )
        for i, keyword in enumerate(value):
            if not keyword.strip():
                raise ValueError(f"keyword {i} is empty; every keyword needs a word in it")
            if len(keyword) > MAX_KEYWORD_LENGTH:
                raise ValueError(
                    f"keyword {i} ({keyword[:40]!r}...) has {len(keyword)} characters; at most "
                    f"{MAX_KEYWORD_LENGTH} are allowed (a keyword is a word or a short phrase)"
                )
        return value

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if (
            not _ID_RE.fullmatch(value)
            or "__" in value
            or value.endswith("_")
            or len(value) > MAX_ID_LENGTH
        ):
            raise ValueError(
                f"catalogue id {value[: MAX_ID_LENGTH + 20]!r} is invalid: use letters, digits, "
                f"'-' and '_', start with a letter or digit, at most {MAX_ID_LENGTH} "
                "characters, never '__' and no '_' at the end (in a tool name such as "
                "'id__tool', '__' ends the id; 'a_' + '__' + 'b' would read as 'a' + '__' + '_b')"
            )
        return value
