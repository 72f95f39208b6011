"""The catalogue: a static list of the MCP servers an application supports."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["McpCatalogueEntry"]

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class McpCatalogueEntry(BaseModel):
    """One MCP server the application supports; identical for every user.

    Args:
        id: the activation key and the tool namespace (``id__tool``); letters, digits, ``-``
            and ``_``, and no ``__`` (the namespace separator).
        name: a human name, e.g. "Notion".
        description: what the server can do; discovery ranks on it.
        url: the Streamable HTTP endpoint.
        tags: keywords for discovery and tag filters.
        exclude_tools: server tool names (un-namespaced) never offered to the model.
        metadata: free-form data for the application.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    description: str
    url: str
    tags: list[str] = Field(default_factory=list)
    exclude_tools: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID_RE.match(value) or "__" in value:
            raise ValueError(
                f"catalogue id {value!r} is invalid: use letters, digits, '-' and '_', start "
                "with a letter or digit, and never '__' (it separates namespace and tool)"
            )
        return value
