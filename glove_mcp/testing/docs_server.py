"""A local MCP server with resources and prompts, for tests: a small documentation site.

``build_docs_server()`` offers text and binary resources, a resource template, prompts with
required and optional arguments, and tools whose results carry what a model should and should
not see: a resource link, content meant only for the user, embedded blobs.
"""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage

from glove_mcp.testing.servers import TINY_PNG

__all__ = [
    "ARCHIVE_BYTES",
    "DOCS_PAGES",
    "DOCS_PROMPT_NAMES",
    "DOCS_RESOURCE_URIS",
    "DOCS_TOOL_NAMES",
    "build_docs_server",
]

DOCS_PAGES = {
    "intro": "Glove mounts MCP servers as tools.",
    "auth": "Log in once with glove-mcp login.",
}
"""The pages ``docs://page/{page_id}`` reads, by id."""

ARCHIVE_BYTES = bytes(range(256)) * 4
"""The 1024 bytes of ``docs://archive.bin`` (binary, not an image)."""

DOCS_RESOURCE_URIS = ("docs://readme", "docs://logo.png", "docs://archive.bin")
"""The resources ``resources/list`` lists, in order."""

DOCS_PROMPT_NAMES = ("summarize", "greet")
"""The prompts ``prompts/list`` lists, in order."""

DOCS_TOOL_NAMES = ("find_doc", "build_status", "embedded_logo", "embedded_archive")
"""Every tool of the docs server."""

README = "# Docs\nStart with docs://page/intro."

_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
_USER_ONLY = types.Annotations(audience=["user"], priority=0.4)
_FOR_BOTH = types.Annotations(audience=["user", "assistant"])


def build_docs_server(name: str = "docs", **server_kwargs: Any) -> MCPServer:
    """A documentation server with resources, a resource template, prompts and tools.

    Resources: ``docs://readme`` (markdown text), ``docs://logo.png`` (a PNG blob),
    ``docs://archive.bin`` (a non-image blob), and the template ``docs://page/{page_id}``.
    Prompts: ``summarize(topic, style="short")`` (``topic`` required) and ``greet()``.
    Tools: ``find_doc`` (a resource link), ``build_status`` (text for the assistant and a
    user-only block), ``embedded_logo`` and ``embedded_archive`` (embedded blobs).

    Args:
        name: the server name reported at initialize.
        **server_kwargs: passed to ``MCPServer``; ``log_level`` defaults to WARNING so the SDK
            leaves the root logger alone.
    """
    server_kwargs.setdefault("log_level", "WARNING")
    server = MCPServer(name, **server_kwargs)

    @server.resource("docs://readme", name="readme", title="Read me", mime_type="text/markdown")
    def readme() -> str:
        """Where to start."""
        return README

    @server.resource("docs://logo.png", name="logo", mime_type="image/png")
    def logo() -> bytes:
        """The project logo."""
        return TINY_PNG

    @server.resource("docs://archive.bin", name="archive", mime_type="application/octet-stream")
    def archive() -> bytes:
        """An export of every page."""
        return ARCHIVE_BYTES

    @server.resource("docs://page/{page_id}", name="page", mime_type="text/plain")
    def page(page_id: str) -> str:
        """One page by id."""
        try:
            return DOCS_PAGES[page_id]
        except KeyError:
            raise ValueError(f"no page {page_id!r}; pages: {', '.join(DOCS_PAGES)}") from None

    @server.prompt(title="Summarize a topic")
    def summarize(topic: str, style: str = "short") -> list[Message]:
        """Ask for a summary of the docs on ``topic``."""
        return [
            UserMessage(f"Summarize the docs about {topic}, {style} style."),
            AssistantMessage("Which pages should I read?"),
            UserMessage("Start with docs://page/intro."),
        ]

    @server.prompt()
    def greet() -> str:
        """Say hello."""
        return "Hello, docs!"

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def find_doc(page_id: str) -> list[Any]:
        """Find a page and link to it."""
        if page_id not in DOCS_PAGES:
            raise ToolError(f"no page {page_id!r}")
        return [
            f"Found page {page_id}.",
            types.ResourceLink(
                uri=f"docs://page/{page_id}", name=f"Page {page_id}", mime_type="text/plain"
            ),
        ]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def build_status() -> list[Any]:
        """The build status: a summary for everyone, the raw log for the user only."""
        return [
            types.TextContent(text="Build passed.", annotations=_FOR_BOTH),
            types.TextContent(text="raw build log: 412 lines", annotations=_USER_ONLY),
        ]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def embedded_logo() -> list[Any]:
        """The logo, embedded."""
        blob = types.BlobResourceContents(
            uri="docs://logo.png", mime_type="image/png", blob=base64.b64encode(TINY_PNG).decode()
        )
        return [types.EmbeddedResource(resource=blob)]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def embedded_archive() -> list[Any]:
        """The archive, embedded."""
        blob = types.BlobResourceContents(
            uri="docs://archive.bin",
            mime_type="application/octet-stream",
            blob=base64.b64encode(ARCHIVE_BYTES).decode(),
        )
        return [types.EmbeddedResource(resource=blob)]

    return server
