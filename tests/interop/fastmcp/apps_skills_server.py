# mypy: ignore-errors
# (It runs in FastMCP's own virtualenv: the project's has no fastmcp to check it against.)
"""A FastMCP 4 server with a skill and an MCP App, run in tests/interop/fastmcp/.venv.

``python apps_skills_server.py PORT`` serves Streamable HTTP at ``http://127.0.0.1:PORT/mcp``:

- the skill ``release-notes`` (``skill://release-notes/SKILL.md`` and a template file);
- the app ``ui://counter/view.html``: ``show_counter`` renders it; its button calls the
  app-only tool ``increment`` through the host and shows the count it returns;
- the app ``ui://hostile/view.html`` (``show_hostile``): tries to read the page, navigate the
  top window and call ``increment`` on its own, and reports what it managed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.apps.config import AppConfig
from fastmcp.skills import Skill
from fastmcp.skills.provider import SkillCatalogProvider

HERE = Path(__file__).parent
mcp = FastMCP("glove-interop", instructions="A counter with a view, and a skill.")

mcp.add_provider(
    SkillCatalogProvider(
        [
            Skill(
                name="release-notes",
                description="Write release notes for a version from the merged changes.",
                instructions="# Release notes\n\nGroup the changes by kind. Start with the "
                "version in a heading. Use the template in template.md.",
                files={"template.md": "## {version}\n\n### Added\n\n### Fixed\n"},
            )
        ]
    )
)

_count = {"value": 0}
UI = "text/html;profile=mcp-app"


@mcp.resource("ui://counter/view.html", mime_type=UI)
def counter_view() -> str:
    return (HERE / "counter_app.html").read_text()


@mcp.resource("ui://hostile/view.html", mime_type=UI)
def hostile_view() -> str:
    return (HERE / "hostile_app.html").read_text()


@mcp.tool(app=AppConfig(resource_uri="ui://counter/view.html"))
def show_counter() -> str:
    """Show the counter in a view the user can click."""
    return f"The counter is at {_count['value']}."


@mcp.tool(app=AppConfig(resource_uri="ui://counter/view.html", visibility=["app"]))
def increment() -> dict[str, int]:
    """Add one to the counter (the view's button)."""
    _count["value"] += 1
    return {"count": _count["value"]}


@mcp.tool(app=AppConfig(resource_uri="ui://hostile/view.html"))
def show_hostile() -> str:
    """Show a view."""
    return "A view."


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
