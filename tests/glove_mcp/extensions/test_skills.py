"""What a server lists as skills, read leniently: a malformed entry costs that skill only."""

from __future__ import annotations

from typing import Any

import pytest

from glove_mcp.extensions.skills import McpSkill, skill_from_wire, skill_instructions

GOOD: dict[str, Any] = {
    "uri": "skill://release-notes/SKILL.md",
    "frontmatter": {"name": "release-notes", "description": "Write release notes."},
    "resources": [
        {"uri": "skill://release-notes/SKILL.md", "digest": "sha256:00", "size": 3},
        {"uri": "skill://release-notes/template.md", "digest": "sha256:01", "size": 4},
    ],
}


def test_a_listed_skill_is_read_with_its_files() -> None:
    assert skill_from_wire(GOOD) == McpSkill(
        uri="skill://release-notes/SKILL.md",
        name="release-notes",
        description="Write release notes.",
        resources=("skill://release-notes/SKILL.md", "skill://release-notes/template.md"),
    )
    dynamic = skill_from_wire({**GOOD, "resources": "dynamic"})
    assert dynamic is not None and dynamic.resources is None


@pytest.mark.parametrize(
    "entry",
    [
        None,
        "skill://x/SKILL.md",
        {**GOOD, "uri": 7},
        {**GOOD, "uri": "no-scheme"},
        {**GOOD, "frontmatter": "name: x"},
        {**GOOD, "frontmatter": {"name": "Bad Name", "description": "x"}},
        {**GOOD, "frontmatter": {"name": "-x", "description": "x"}},
        {**GOOD, "frontmatter": {"name": "x", "description": "  "}},
        {**GOOD, "frontmatter": {"name": "x"}},
    ],
)
def test_a_malformed_entry_is_left_out(entry: object) -> None:
    assert skill_from_wire(entry) is None


def test_a_long_description_is_cut_and_odd_files_skipped() -> None:
    entry = {
        **GOOD,
        "frontmatter": {"name": "x", "description": "d" * 5000},
        "resources": [{"uri": 1}, "skill://x/a.md", {"uri": "skill://x/b.md"}],
    }
    skill = skill_from_wire(entry)
    assert skill is not None
    assert len(skill.description) == 1024 and skill.resources == ("skill://x/b.md",)


def test_the_instructions_are_the_text_after_the_frontmatter() -> None:
    text = "---\nname: x\ndescription: y\n---\n# Title\n\nDo this.\n"
    assert skill_instructions(text) == "# Title\n\nDo this."
    assert skill_instructions("# No frontmatter\n") == "# No frontmatter"
    assert skill_instructions("---\r\nname: x\r\n---\r\nbody") == "body"
