"""Local MCP servers for tests and the demo: a Notion-like "notes" server, a Linear-like
"tracker" server, and a low-level server whose ``tools/list`` is paginated.

Each factory returns a fresh server with its own in-memory data, so tests never share state.
``build_notes_server`` and ``build_tracker_server`` pass extra keyword arguments to
``MCPServer`` (e.g. ``auth_server_provider=``, ``token_verifier=``, ``auth=AuthSettings(...)``)
so the same tools can sit behind a real OAuth authorization server.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Audio, Image
from pydantic import BaseModel

__all__ = [
    "NOTES_TOOL_NAMES",
    "TINY_PNG",
    "TINY_WAV",
    "TRACKER_TOOL_NAMES",
    "Issue",
    "IssueList",
    "Page",
    "PageList",
    "build_notes_server",
    "build_paged_server",
    "build_tracker_server",
]

TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG the notes server returns as a page cover."""

TINY_WAV = (
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00"
    b"@\x1f\x00\x00\x01\x00\x08\x00data\x00\x00\x00\x00"
)
"""An empty 8 kHz WAV the notes server returns as a page's voice memo."""

NOTES_TOOL_NAMES = (
    "create_page",
    "export_pages",
    "page_cover",
    "page_memo",
    "read_page",
    "read_page_text",
    "search_pages",
    "update_page",
)
"""Every tool of the notes server."""

TRACKER_TOOL_NAMES = ("create_issue", "delete_issue", "list_issues", "update_issue")
"""Every tool of the tracker server."""

_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


class Page(BaseModel):
    """A notes page."""

    id: str
    title: str
    body: str


class PageList(BaseModel):
    """Search results of the notes server."""

    pages: list[Page]


class Issue(BaseModel):
    """A tracker issue."""

    id: str
    title: str
    description: str
    state: str
    priority: int


class IssueList(BaseModel):
    """The tracker's issues, possibly filtered."""

    issues: list[Issue]


def build_notes_server(name: str = "notes", **server_kwargs: Any) -> MCPServer:
    """A Notion-like server: search, read, create and update pages.

    Reads are annotated read-only. ``page_cover`` returns an image, ``page_memo`` audio,
    ``read_page_text`` plain text only, ``export_pages`` a large text (for size limits).

    Args:
        name: the server name reported at initialize.
        **server_kwargs: passed to ``MCPServer`` (auth settings, token verifier, …);
            ``log_level`` defaults to WARNING so the SDK leaves the root logger alone.
    """
    server_kwargs.setdefault("log_level", "WARNING")
    server = MCPServer(name, **server_kwargs)
    pages: dict[str, Page] = {
        "p1": Page(id="p1", title="Roadmap", body="Ship glove_mcp in Q1."),
        "p2": Page(id="p2", title="Meeting notes", body="Discussed the roadmap and hiring."),
    }
    ids = itertools.count(3)

    def _get(page_id: str) -> Page:
        try:
            return pages[page_id]
        except KeyError:
            raise ToolError(f"no page with id {page_id!r}") from None

    @server.tool(annotations=_READ_ONLY)
    def search_pages(query: str) -> PageList:
        """Search pages whose title or body contains the query (case-insensitive)."""
        q = query.lower()
        return PageList(
            pages=[p for p in pages.values() if q in p.title.lower() or q in p.body.lower()]
        )

    @server.tool(annotations=_READ_ONLY)
    def read_page(page_id: str) -> Page:
        """Read one page by id."""
        return _get(page_id)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def read_page_text(page_id: str) -> list[str]:
        """Read one page as two text blocks: its title and its body."""
        page = _get(page_id)
        return [page.title, page.body]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def page_cover(page_id: str) -> list[Any]:
        """The page's cover image, with a caption."""
        page = _get(page_id)
        return [f"Cover of {page.title}", Image(data=TINY_PNG, format="png")]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def page_memo(page_id: str) -> list[Any]:
        """The page's voice memo, with a caption."""
        page = _get(page_id)
        return [f"Memo for {page.title}", Audio(data=TINY_WAV, format="wav")]

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def export_pages(repeat: int = 1) -> str:
        """Export every page as one text, repeated ``repeat`` times."""
        text = "\n".join(f"# {p.title}\n{p.body}" for p in pages.values())
        return "\n".join([text] * repeat)

    @server.tool()
    def create_page(title: str, body: str = "") -> Page:
        """Create a page."""
        page = Page(id=f"p{next(ids)}", title=title, body=body)
        pages[page.id] = page
        return page

    @server.tool()
    def update_page(page_id: str, body: str) -> Page:
        """Replace a page's body."""
        page = _get(page_id)
        page.body = body
        return page

    return server


def build_tracker_server(name: str = "tracker", **server_kwargs: Any) -> MCPServer:
    """A Linear-like server: list, create and update issues, and a destructive delete.

    Args:
        name: the server name reported at initialize.
        **server_kwargs: passed to ``MCPServer`` (see ``build_notes_server``).
    """
    server_kwargs.setdefault("log_level", "WARNING")
    server = MCPServer(name, **server_kwargs)
    issues: dict[str, Issue] = {
        "ENG-1": Issue(
            id="ENG-1", title="Fix login", description="401 loop", state="open", priority=1
        ),
    }
    ids = itertools.count(2)

    @server.tool(annotations=_READ_ONLY)
    def list_issues(state: str | None = None) -> IssueList:
        """List issues, optionally only those in ``state`` (open, in_progress, done)."""
        return IssueList(issues=[i for i in issues.values() if state is None or i.state == state])

    @server.tool()
    def create_issue(title: str, description: str = "", priority: int = 3) -> Issue:
        """Create an issue in state 'open'."""
        issue = Issue(
            id=f"ENG-{next(ids)}",
            title=title,
            description=description,
            state="open",
            priority=priority,
        )
        issues[issue.id] = issue
        return issue

    @server.tool()
    def update_issue(issue_id: str, state: str | None = None, title: str | None = None) -> Issue:
        """Change an issue's state or title."""
        if issue_id not in issues:
            raise ToolError(f"no issue with id {issue_id!r}")
        issue = issues[issue_id]
        if state is not None:
            issue.state = state
        if title is not None:
            issue.title = title
        return issue

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=True))
    def delete_issue(issue_id: str) -> str:
        """Delete an issue for good."""
        if issues.pop(issue_id, None) is None:
            raise ToolError(f"no issue with id {issue_id!r}")
        return f"deleted {issue_id}"

    return server


def build_paged_server(
    tool_count: int = 25,
    page_size: int = 10,
    name: str = "paged",
    cursors: list[str | None] | None = None,
) -> Server[Any]:
    """A low-level server with ``tool_count`` tools ``tool_0`` … whose ``tools/list`` returns
    ``page_size`` tools per page (``MCPServer`` never paginates). Each tool echoes its name and
    arguments as text.

    Args:
        tool_count: how many tools.
        page_size: tools per page.
        name: the server name.
        cursors: when given, the cursor of every ``tools/list`` request is appended to it.
    """
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    all_tools = [
        types.Tool(
            name=f"tool_{i}",
            description=f"Echo tool number {i}.",
            input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
        )
        for i in range(tool_count)
    ]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        if cursors is not None:
            cursors.append(cursor)
        start = int(cursor) if cursor else 0
        end = start + page_size
        return types.ListToolsResult(
            tools=all_tools[start:end], next_cursor=str(end) if end < len(all_tools) else None
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = f"{params.name} {sorted((params.arguments or {}).items())}"
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)
