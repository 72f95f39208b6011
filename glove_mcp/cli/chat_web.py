"""``glove-mcp chat``'s web page: where a server's view (MCP Apps) shows.

The terminal shows a view's tool result as its text (the fallback every server must make
meaningful); under it, one line with a link that opens this conversation in the browser,
where the view runs. The page is ``glove_mcp.server.session_page.SessionPage``: served by the
chat itself on ``127.0.0.1``, from the first view's result (or ``/web``) until the
conversation ends, for this conversation only, with a secret made for it (in the link's
fragment only: see that module). Messages are typed in the terminal; the page follows them
live, shows the views, and asks the person there before a view's tool call runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from glove_core import Glove
from glove_core.stores.base import count_messages
from glove_core.subscribers import SubscriberEvent, ToolUseResult
from glove_mcp.cli.console import ConsolePrinter, plain
from glove_mcp.extensions.apps import APP_KEY
from glove_mcp.server.session_page import SessionPage, servable_id

__all__ = ["ChatWebPage", "servable_id"]


class ChatWebPage:
    """A subscriber that puts the page's link under each result with a view, and ``/web``.

    Args:
        glove: the conversation's agent (built).
        db: the SQLite file the conversation is saved in.
        session_id: the conversation (``servable_id`` must accept it).
        printer: the chat's printer (the link is one of its lines).
    """

    def __init__(self, glove: Glove, db: Path, session_id: str, printer: ConsolePrinter) -> None:
        self._glove = glove
        self._page = SessionPage(str(db), session_id, glove)
        self._printer = printer
        self._failed: str | None = None

    def __repr__(self) -> str:
        return f"<ChatWebPage {self._page!r}>"

    async def _link(self) -> str | None:
        """The page's link, serving it first if needed; None (said once) when it cannot be."""
        if self._failed is not None:
            return None
        try:
            await self._page.start()
        except OSError as exc:
            self._failed = exc.strerror or str(exc)
            self._printer.note(f"(the web page cannot be served: {plain(self._failed)})")
            return None
        return self._page.link

    async def record(self, event: SubscriberEvent) -> None:
        """Under a result that has a view: the line with the link."""
        if not isinstance(event, ToolUseResult):
            return
        render = event.result.render_data
        view = render.get(APP_KEY) if isinstance(render, dict) else None
        if not isinstance(view, dict):
            return
        link = await self._link()
        if link is not None:
            server = plain(view.get("server", "?"))
            self._printer.note(f"  view of {server}: {link}  (opens this chat in the browser)")

    async def command(self, out: TextIO) -> None:
        """``/web``: the link (the page served from now on)."""
        if not await count_messages(self._glove.store):
            out.write(
                "nothing to show yet: the web page opens once the conversation has a message\n"
            )
            return
        link = await self._link()
        if link is not None:
            out.write(
                f"this conversation in the browser, while the chat runs: {link}\n"
                "(type your messages here; views run there, and ask there before they call "
                "a tool)\n"
            )

    async def aclose(self) -> None:
        """Stop serving the page (the conversation ends)."""
        await self._page.aclose()
