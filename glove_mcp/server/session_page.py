"""The chat page for one conversation another program runs: ``SessionPage``.

The terminal chat (``glove-mcp chat``) shows a view's result as text; ``SessionPage`` lets the
person open that same conversation in a browser, where the view runs. It is the headless
server's own page and routes (``HeadlessServer(web=True)``), served by the chat's process on
``127.0.0.1`` on a free port, with three differences:

- **The chat's own agent.** The session's agent is the ``Glove`` the chat runs, not one built
  for the page: one agent, one conversation store writing, so the page cannot fork the
  conversation. The server reads the saved messages through its own connection to the same
  SQLite file (what it does for every session) and follows the agent's events live.
- **One session, and reading it.** Only the page's files, the views' frame, ``/principal``
  and the session's read routes are served: its history, its follow stream, its waiting
  questions and their answers, and its views' tool calls (``/app-calls``, through the
  agent's permission slot as ever). Every other route (listing or creating sessions, another
  session, deleting, sending a message, outside events) is 404 before authentication, so the
  page shows no other conversation of the file and changes none. Messages are typed in the
  terminal, which owns the conversation's prompt and its questions.
- **A fresh secret.** The key is ``secrets.token_urlsafe(32)``, made at ``start`` and gone with
  the page; ``link`` carries it in the URL's fragment (``#session=ID&key=SECRET``), which
  browsers never send, so no request line, access log or ``Referer`` holds it; the page moves
  it to the tab's ``sessionStorage`` and drops it from the address at once. It is compared by
  its digest, like any key; nothing logs it and the page's ``repr`` hides it.

The frame's sandbox, its policy and the page's policy are the server's, unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import Iterator
from contextlib import AsyncExitStack

import uvicorn
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from glove_core import Glove
from glove_mcp.server._app_views import FRAME_PATH
from glove_mcp.server._http_limits import HttpLimits, uvicorn_config
from glove_mcp.server._session_access import check_id
from glove_mcp.server.app import HeadlessServer
from glove_mcp.server.session_storage import SessionStore

__all__ = ["SessionPage", "one_session_routes", "servable_id"]

HOST = "127.0.0.1"

_PAGE_FILES = frozenset({"/", "/web/app.js", "/web/app.css", "/favicon.ico", FRAME_PATH})
_REFUSED = "this page shows one conversation only: open the link the chat printed"


def one_session_routes(session_id: str) -> Iterator[tuple[str, str]]:
    """The (method, path) pairs ``SessionPage`` serves for ``session_id`` besides the page's
    files (a slot's answer is ``POST .../slots/<slot id>``, matched by its prefix)."""
    base = f"/sessions/{session_id}"
    yield "GET", "/principal"
    yield "GET", base
    yield "GET", f"{base}/events"
    yield "GET", f"{base}/slots"
    yield "POST", f"{base}/app-calls"


class _OneSession:
    """ASGI: passes the page's files and ``session_id``'s read routes to ``app``; answers
    anything else 404 (see the module docstring)."""

    def __init__(self, app: ASGIApp, session_id: str) -> None:
        self._app = app
        self._routes = frozenset(one_session_routes(session_id))
        self._answers = f"/sessions/{session_id}/slots/"

    def _served(self, method: str, path: str) -> bool:
        if method in ("GET", "HEAD") and path in _PAGE_FILES:
            return True
        if (method, path) in self._routes:
            return True
        if method == "POST" and path.startswith(self._answers):
            return "/" not in path[len(self._answers) :]
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._served(scope["method"], scope["path"]):
            await JSONResponse({"error": _REFUSED}, status_code=404)(scope, receive, send)
            return
        await self._app(scope, receive, send)


class _Quiet(uvicorn.Server):
    """uvicorn inside another program: Ctrl-C and SIGTERM stay that program's."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class SessionPage:
    """The web page of conversation ``session_id``, whose agent ``glove`` another program runs
    (see the module docstring). Nothing listens until ``start``; ``aclose`` stops it.

    Args:
        db_path: the SQLite file the conversation is saved in (the agent's store's file).
        session_id: the conversation (an id the server can serve: ``servable_id``).
        glove: its agent, built. Without ``server_mode``, a view's tool call asks the person
            first (its permission slot names ``requested_by``, for the page to answer).

    Raises:
        ValueError: ``session_id`` is not an id the server can serve.
    """

    def __init__(self, db_path: str, session_id: str, glove: Glove) -> None:
        self._db_path = db_path
        self._session = session_id
        if not servable_id(session_id):
            raise ValueError(
                f"session id {session_id!r} cannot be served: 1-128 characters from "
                "[A-Za-z0-9_.:-], not only dots"
            )
        self._glove = glove
        self._secret: str | None = None
        self._port: int | None = None
        self._server: HeadlessServer | None = None
        self._uvicorn: _Quiet | None = None
        self._task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        where = f"http://{HOST}:{self._port}/" if self._port else "not started"
        return f"<SessionPage {self._session!r} {where}>"

    @property
    def started(self) -> bool:
        """Whether the page is being served."""
        return self._task is not None

    @property
    def link(self) -> str:
        """The page's address with the session and the secret in its fragment (only for the
        person's eyes: print it, never log it).

        Raises:
            RuntimeError: the page is not started.
        """
        if self._secret is None or self._port is None:
            raise RuntimeError("the session page is not started")
        return f"http://{HOST}:{self._port}/#session={self._session}&key={self._secret}"

    async def start(self) -> None:
        """Listen on a free port of ``127.0.0.1`` with a fresh secret (nothing when started).

        Raises:
            OSError: no port could be had.
        """
        if self._task is not None:
            return
        secret = secrets.token_urlsafe(32)
        server = HeadlessServer(
            self._db_path,
            secret,
            self._agent,
            web=True,
            max_sessions=1,
            idle_timeout=None,  # the chat's agent stays open for as long as the page
        )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.bind((HOST, 0))
            sock.listen(64)  # a browser connecting before uvicorn runs waits in the backlog
        except OSError:
            sock.close()
            raise
        # A short grace at the end: the chat is leaving, and its page goes with it.
        config = uvicorn_config(
            _OneSession(server.app, self._session),
            HttpLimits(graceful_shutdown=2, max_connections=64),
            log_level="warning",
            access_log=False,
            # The program's logging stays as it set it up (uvicorn would install its own
            # handlers): its few warnings reach the program's handler like any library's.
            log_config=None,
        )
        self._server, self._uvicorn = server, _Quiet(config)
        self._secret, self._port = secret, sock.getsockname()[1]
        self._task = asyncio.create_task(self._serve(self._uvicorn, sock))

    @staticmethod
    async def _serve(server: _Quiet, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            sock.close()

    async def _agent(self, session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        # Only this session passes ``_OneSession``; checked again here all the same.
        if session_id != self._session:
            raise HTTPException(404, f"no session {session_id!r}")
        return self._glove

    async def aclose(self) -> None:
        """Stop serving: open streams end, the secret is forgotten. The server closes its
        session as it closes any (``Glove.aclose``: the agent's timers; the program closes
        its agent right after anyway)."""
        task, self._task = self._task, None
        if task is None:
            return
        assert self._server is not None and self._uvicorn is not None
        self._server.stopping()  # follow streams would hold the shutdown for its grace
        self._uvicorn.should_exit = True
        try:
            await task
        finally:
            self._secret = None
            self._server = self._uvicorn = None


def servable_id(session_id: str) -> bool:
    """Whether the server can serve a session of id ``session_id`` (its ids' syntax)."""
    try:
        check_id(session_id)
    except HTTPException:
        return False
    return True
