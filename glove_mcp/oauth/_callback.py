"""The loopback callback listener of ``run_mcp_oauth`` and its paste-back alternative.

The listener is a minimal HTTP/1.1 server on 127.0.0.1 written on asyncio streams: it serves
one path for one browser redirect, which needs no ASGI server (uvicorn is a dependency, for
``glove-mcp serve`` and the test servers, but not used here). It is bound before client
registration, because its redirect URI goes into the registration. It answers every request
with a small HTML page and settles one future with the first callback that carries this
login's ``state``: a code, or an ``error=``. A callback with another ``state``, or none, is
answered 400 and ignored: the listener's port is fixed and known, so any web page the person
visits can send the browser to it, and such a request must not end (or decide) the login.
Paste-back feeds the same future from a line typed on stdin; a pasted URL with the wrong
``state`` does end the login, since the person chose to paste it.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import threading
from typing import IO
from urllib.parse import parse_qs, urlparse

from mcp.shared.auth import AuthorizationCodeResult

from glove_mcp.errors import (
    OAuthAuthorizationDeniedError,
    OAuthFlowError,
    OAuthStateMismatchError,
)

__all__ = ["CallbackReceiver", "parse_authorization_response", "read_line_in_thread"]

logger = logging.getLogger(__name__)

_MAX_HEADER_BYTES = 16 * 1024

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{body}</p></body></html>
"""


def _page(status: int, title: str, body: str) -> bytes:
    text = _PAGE.format(title=html.escape(title), body=html.escape(body)).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "OK")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(text)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + text


def _query(text: str) -> dict[str, list[str]] | None:
    """The parameters of a pasted redirect URL or query string; None for a bare code."""
    text = text.strip()
    if "code=" in text or "error=" in text or "://" in text:
        return parse_qs(urlparse(text).query if "://" in text else text.lstrip("?"))
    return None


def _decide(
    params: dict[str, list[str]], expected_state: str | None
) -> AuthorizationCodeResult | OAuthFlowError | None:
    """A callback's verdict: the code, the error to raise, or None (neither code nor error)."""

    def first(name: str) -> str | None:
        values = params.get(name)
        return values[0] if values else None

    state, error, code = first("state"), first("error"), first("code")
    if error is None and code is None:
        return None
    if expected_state is not None and state != expected_state:
        return OAuthStateMismatchError()
    if error is not None:
        return OAuthAuthorizationDeniedError(error, first("error_description"))
    assert code is not None
    return AuthorizationCodeResult(code=code, state=state, iss=first("iss"))


def parse_authorization_response(text: str, expected_state: str | None) -> AuthorizationCodeResult:
    """The code (with ``state`` and ``iss``) in a redirected URL, a query string or a bare code.

    Raises:
        OAuthAuthorizationDeniedError, OAuthStateMismatchError: what the redirect says.
        OAuthFlowError: the text holds neither a code nor an error.
    """
    params = _query(text)
    if params is None:
        if not text.strip():
            raise OAuthFlowError("the authorization step returned nothing (no code, no URL)")
        # A bare code carries no state; the person copied it from this login's page.
        return AuthorizationCodeResult(code=text.strip(), state=expected_state)
    verdict = _decide(params, expected_state)
    if verdict is None:
        raise OAuthFlowError(
            "the redirected URL carries neither a code nor an error; paste the whole URL the "
            "browser landed on"
        )
    if isinstance(verdict, OAuthFlowError):
        raise verdict
    return verdict


class CallbackReceiver:
    """Receives the authorization response, by HTTP callback or pasted text.

    Args:
        host: the interface to listen on (127.0.0.1).
        port: the port (0 picks a free one).
        path: the callback path, e.g. ``/callback``.
    """

    def __init__(self, host: str, port: int, path: str) -> None:
        self.host = host
        self.port = port
        self.path = path or "/"
        self._server: asyncio.Server | None = None
        self._expected_state: str | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    async def start(self) -> int:
        """Bind and listen; returns the bound port."""
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def expect_state(self, state: str | None) -> None:
        """Record the ``state`` this login sent (taken from the authorization URL)."""
        self._expected_state = state

    @property
    def result(self) -> asyncio.Future[AuthorizationCodeResult]:
        """The future settled by the first decisive callback."""
        if self._result is None:
            raise RuntimeError("CallbackReceiver.start() was not called")
        return self._result

    def submit_pasted(self, text: str) -> None:
        """Settle the result from what the user pasted: the redirected URL, or the bare code."""
        text = text.strip()
        if not text:
            return
        params = _query(text)
        if params is None:
            # A bare code carries no state; the person copied it from this login's page.
            params = {"code": [text], "state": [self._expected_state or ""]}
        self._settle(params)

    def _settle(
        self, params: dict[str, list[str]], *, from_browser: bool = False
    ) -> tuple[int, str, str]:
        """Decide on a callback's parameters; returns (status, title, text) for the page.

        ``from_browser``: the parameters came by HTTP, from whoever reached the port; one that
        is not for this login is ignored instead of ending it.
        """
        future = self.result
        verdict = _decide(params, self._expected_state)
        if verdict is None:
            return 400, "Not a callback", "This request carried neither a code nor an error."
        if from_browser and (
            self._expected_state is None or isinstance(verdict, OAuthStateMismatchError)
        ):
            logger.warning(
                "ignored a request to the OAuth callback listener that is not for the login "
                "in progress (wrong or missing state); still waiting for the real one"
            )
            return (
                400,
                "Not this login's callback",
                "This request does not belong to the login in progress and was ignored.",
            )
        if not future.done():
            if isinstance(verdict, OAuthFlowError):
                future.set_exception(verdict)
            else:
                future.set_result(verdict)
        if isinstance(verdict, OAuthStateMismatchError):
            return 400, "Login failed", "The state parameter did not match. Run the login again."
        if isinstance(verdict, OAuthAuthorizationDeniedError):
            error = params.get("error", ["?"])[0]
            return 400, "Authorization not granted", f"The server answered: {error}."
        return 200, "Logged in", "You can close this tab and return to the terminal."

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        try:
            request_line = head[:_MAX_HEADER_BYTES].split(b"\r\n", 1)[0].decode("latin-1")
            method, target, _ = request_line.split(" ", 2)
            url = urlparse(target)
            if method != "GET" or url.path != self.path:
                response = _page(404, "Not found", "This is the OAuth callback listener.")
            else:
                response = _page(*self._settle(parse_qs(url.query), from_browser=True))
        except ValueError:
            response = _page(400, "Bad request", "Malformed request.")
        try:
            writer.write(response)
            await writer.drain()
        except ConnectionError:
            logger.debug("OAuth callback client went away before the page was sent")
        finally:
            writer.close()

    async def aclose(self) -> None:
        """Stop listening (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            await server.wait_closed()
        if self._result is not None and not self._result.done():
            self._result.cancel()


def read_line_in_thread(
    stream: IO[str], loop: asyncio.AbstractEventLoop, receiver: CallbackReceiver
) -> None:
    """Read one line from ``stream`` in a daemon thread and hand it to ``receiver``.

    A daemon thread (not the default executor) so a login that finishes by HTTP callback
    never waits at exit for a ``readline`` nobody will answer.
    """

    def _deliver(text: str) -> None:
        if not receiver.result.done():
            receiver.submit_pasted(text)

    def _run() -> None:
        try:
            line = stream.readline()
        except (OSError, ValueError):
            return
        if line:
            # RuntimeError: the loop closed, the login already finished another way.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_deliver, line)

    threading.Thread(target=_run, name="glove-mcp-oauth-paste", daemon=True).start()
