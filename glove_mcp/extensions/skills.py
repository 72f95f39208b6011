"""Skills (the ``io.modelcontextprotocol/skills`` extension, SEP-2640): a server's packaged
instructions and workflows, each a ``SKILL.md`` resource with files beside it.

``McpServerConnection.list_skills`` (``skills/list``) returns ``McpSkill``\\s; a skill's
instructions are its ``SKILL.md`` read with ``resources/read`` (``skill_instructions`` takes
the frontmatter off), and its files are ``skill://`` resources any resource reader reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = [
    "MAX_SKILLS",
    "SKILLS_EXTENSION",
    "McpSkill",
    "skill_from_wire",
    "skill_instructions",
]

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The extension's identifier, in ``capabilities.extensions``."""

MAX_SKILLS = 200
"""The most skills kept of one server (the rest are left out, with a warning)."""

_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n?", re.DOTALL)


class McpSkill(BaseModel):
    """A skill a server lists.

    Attributes:
        uri: its ``SKILL.md`` resource (``skill://<path>/SKILL.md``).
        name: lowercase letters, digits and ``-`` (the last folder of the URI).
        description: what it is for (at most 1,024 characters).
        resources: the URIs of its files, ``SKILL.md`` among them; None when the server
            serves them dynamically (``"dynamic"``: read what ``SKILL.md`` names).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: str
    name: str
    description: str
    resources: tuple[str, ...] | None = None


def skill_from_wire(entry: object) -> McpSkill | None:
    """An ``McpSkill`` for one entry of ``skills/list``, or None when it is malformed (no
    ``skill://``-style URI, a name that breaks the rules, an empty description)."""
    if not isinstance(entry, Mapping):
        return None
    uri = entry.get("uri")
    front = entry.get("frontmatter")
    if not isinstance(uri, str) or not isinstance(front, Mapping) or "://" not in uri:
        return None
    name, description = front.get("name"), front.get("description")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return None
    if not isinstance(description, str) or not description.strip():
        return None
    listed: Any = entry.get("resources")
    resources: tuple[str, ...] | None = None
    if isinstance(listed, list):
        resources = tuple(
            r["uri"] for r in listed if isinstance(r, Mapping) and isinstance(r.get("uri"), str)
        )
    return McpSkill(uri=uri, name=name, description=description[:1024], resources=resources)


def skill_instructions(text: str) -> str:
    """A ``SKILL.md``'s body: the text after its YAML frontmatter, stripped."""
    return _FRONTMATTER.sub("", text, count=1).strip()
