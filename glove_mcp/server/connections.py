"""The routes that connect MCP servers per principal, over a ``ConnectionService``.

- ``GET /connections`` lists the catalogue's HTTP servers with the principal's state
  (``connected``, ``needs_login`` or ``open``), expiry and scopes.
- ``POST /connections/{server_id}`` starts authorization code + PKCE and answers
  ``{"authorize_url"}``; the flow waits in the server's database (``connection_flows``),
  single use, for ten minutes.
- ``GET /oauth/callback`` needs no API key — the state is the credential, and a cookie set on
  the browser that started the flow must come back with it — exchanges the code and stores
  the tokens for the flow's principal and the server's resource; every failure is a small
  page with a 4xx status and stores nothing.
- ``DELETE /connections/{server_id}`` revokes (RFC 7009, when offered) and forgets.

The server knows nothing of MCP or OAuth: the service (``glove_mcp.oauth.Connections``)
does the flows; these routes are HTTP only. They get the principal through
``principal_of(request)`` after ``authenticate``; the callback route is public.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import inspect
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import httpx2
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from glove_mcp.errors import OAuthError
from glove_mcp.server.connection_flows import FlowStore, PendingFlow
from glove_mcp.server.principals import Principal

__all__ = [
    "CALLBACK_PATH",
    "ConnectionRefused",
    "ConnectionService",
    "browser_digest",
    "check_public_url",
    "connection_routes",
    "default_principal",
    "mounted_routes",
]

logger = logging.getLogger(__name__)

CALLBACK_PATH = "/oauth/callback"
"""Where authorization servers send the browser back (``<public url>/oauth/callback``)."""

_COOKIE = "glove_connect"
_MAX_QUERY = 4096  # a real callback (code, state, iss) is a few hundred bytes


class ConnectionService(Protocol):
    """What the connection routes need: the servers a principal may connect and the flows.

    ``glove_mcp.oauth.Connections`` is the implementation; the routes never see OAuth.
    """

    flow_ttl: float
    """Seconds an authorization may take."""

    def server_name(self, server_id: str) -> str | None:
        """The display name of an HTTP server of the catalogue, or None when there is none."""
        ...

    async def listing(self, principal: str) -> list[dict[str, Any]]:
        """The principal's view of every HTTP server of the catalogue."""
        ...

    async def start(
        self, principal: str, server_id: str, redirect_uri: str, flows: FlowStore, browser: str
    ) -> str | None:
        """Begin an authorization: its URL, or None (the server needs no login)."""
        ...

    async def finish(self, flow: PendingFlow, code: str, iss: str | None) -> str:
        """Exchange the code, store the tokens; the connected server's name."""
        ...

    async def disconnect(self, principal: str, server_id: str) -> str:
        """Revoke and forget the principal's tokens for the server; the outcome."""
        ...


class ConnectionRefused(Exception):
    """A callback that cannot complete, with the HTTP status its page answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def browser_digest(value: str) -> str:
    """The digest of a browser's connect cookie, as a flow keeps it."""
    return hashlib.sha256(value.encode()).hexdigest()


def default_principal(request: Request) -> Principal:
    """The principal of the single ``GLOVE_API_KEY``: ``default``."""
    return Principal("default")


def _page(status: int, title: str, text: str) -> HTMLResponse:
    body = (
        "<!doctype html><html><head><meta charset='utf-8'><title>"
        f"{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(text)}</p></body></html>"
    )
    return HTMLResponse(
        body,
        status_code=status,
        headers={
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",  # the code is in this page's URL
            "Content-Security-Policy": "default-src 'none'",
        },
    )


def connection_routes(
    connections: ConnectionService,
    flows: FlowStore,
    *,
    authenticate: Callable[[Request], Awaitable[None] | None],
    principal_of: Callable[[Request], Principal] = default_principal,
    public_url: str | None = None,
) -> list[Route]:
    """The connection routes, for a Starlette route list.

    Args:
        connections: the servers and the token store.
        flows: the server database's flow table.
        authenticate: raises ``HTTPException(401)`` for a request without valid credentials
            (not called for the callback).
        principal_of: the authenticated request's principal.
        public_url: the externally visible base URL (the redirect URI is
            ``<public_url>/oauth/callback``); the request's own base URL when None.
    """

    def redirect_uri(request: Request) -> str:
        base = public_url or str(request.base_url)
        return base.rstrip("/") + CALLBACK_PATH

    async def principal(request: Request) -> Principal:
        done = authenticate(request)
        if inspect.isawaitable(done):
            await done
        return principal_of(request)

    def known(request: Request) -> str:
        server_id = str(request.path_params["server_id"])
        if connections.server_name(server_id) is None:
            raise HTTPException(404, f"no HTTP server {server_id!r} in the catalogue")
        return server_id

    def json_errors(
        endpoint: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handled(request: Request) -> Response:
            try:
                return await endpoint(request)
            except HTTPException as exc:
                return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

        return handled

    async def listing(request: Request) -> Response:
        who = await principal(request)
        return JSONResponse({"connections": await connections.listing(who.name)})

    async def connect(request: Request) -> Response:
        who = await principal(request)
        server_id = known(request)
        browser = secrets.token_urlsafe(24)
        try:
            url = await connections.start(
                who.name, server_id, redirect_uri(request), flows, browser
            )
        except OAuthError as exc:
            raise HTTPException(502, f"cannot connect {server_id!r}: {exc}") from None
        except httpx2.HTTPError as exc:
            raise HTTPException(
                502, f"cannot connect {server_id!r}: {type(exc).__name__} reaching the server"
            ) from None
        if url is None:
            return JSONResponse({"id": server_id, "state": "open"}, status_code=409)
        response = JSONResponse({"authorize_url": url})
        response.set_cookie(
            _COOKIE,
            browser,
            max_age=int(connections.flow_ttl),
            path=CALLBACK_PATH,
            httponly=True,
            samesite="lax",
            secure=redirect_uri(request).startswith("https://"),
        )
        return response

    async def disconnect(request: Request) -> Response:
        who = await principal(request)
        server_id = known(request)
        outcome = await connections.disconnect(who.name, server_id)
        return JSONResponse({"id": server_id, "revocation": outcome})

    async def callback(request: Request) -> Response:
        if len(request.scope.get("query_string", b"")) > _MAX_QUERY:
            return _page(414, "Not connected", "The callback address is too long.")
        query = request.query_params
        state = query.get("state")
        if not state:
            return _page(400, "Not connected", "The callback carries no state.")
        flow = await flows.take(state)  # single use, whatever happens next
        if flow is None:
            return _page(
                400,
                "Not connected",
                "This authorization is unknown or was already used. Start again from Connect.",
            )
        name = connections.server_name(flow.server_id) or flow.server_id
        if flow.expires_at < time.time():
            return _page(400, "Not connected", f"The authorization of {name} expired. Start again.")
        cookie = request.cookies.get(_COOKIE, "")
        if not hmac.compare_digest(browser_digest(cookie), str(flow.data.get("browser", ""))):
            return _page(
                403,
                "Not connected",
                "This authorization was started in another browser. Start again from Connect.",
            )
        error = query.get("error")
        if error is not None:
            text = "You denied access." if error == "access_denied" else "The authorization failed."
            return _page(400, "Not connected", f"{text} {name} was not connected.")
        code = query.get("code")
        if not code:
            return _page(400, "Not connected", "The callback carries no code.")
        try:
            connected = await connections.finish(flow, code, query.get("iss"))
        except ConnectionRefused as exc:
            return _page(exc.status, "Not connected", exc.message)
        except OAuthError as exc:
            logger.info("connecting %r failed: %s", flow.server_id, exc)
            return _page(400, "Not connected", f"{name} was not connected: {exc}")
        except httpx2.HTTPError as exc:
            return _page(502, "Not connected", f"{name} was not connected: {type(exc).__name__}")
        page = _page(200, f"Connected: {connected}", "You can close this tab.")
        page.delete_cookie(_COOKIE, path=CALLBACK_PATH)
        return page

    return [
        Route("/connections", json_errors(listing), methods=["GET"]),
        Route("/connections/{server_id}", json_errors(connect), methods=["POST"]),
        Route("/connections/{server_id}", json_errors(disconnect), methods=["DELETE"]),
        Route(CALLBACK_PATH, callback, methods=["GET"]),
    ]


def check_public_url(url: str | None) -> str | None:
    """``--public-url`` / ``HeadlessServer(public_url=)``: an absolute http(s) URL without
    query or fragment; plain ``http://`` only on loopback (the redirect carries codes).

    Raises:
        ValueError: the URL is unusable (the message says why).
    """
    if url is None:
        return None
    from ipaddress import ip_address
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"public_url must be an http(s) URL like https://glove.example.com, not {url!r}"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"public_url must have no query or fragment, got {url!r}")
    if parts.scheme == "http":
        host = parts.hostname
        try:
            loopback = ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise ValueError(
                f"public_url {url!r} is plain http on a non-loopback host: authorization codes "
                "would cross the network unencrypted; use https://"
            )
    return url.rstrip("/")


def mounted_routes(
    connections: ConnectionService | None,
    flows: FlowStore | None,
    authenticate: Callable[[Request], Awaitable[None] | None],
    principal_of: Callable[[Request], Principal],
    public_url: str | None,
) -> list[Route]:
    """``HeadlessServer``'s connection routes: none without ``connections``."""
    if connections is None or flows is None:
        return []
    return connection_routes(
        connections,
        flows,
        authenticate=authenticate,
        principal_of=principal_of,
        public_url=public_url,
    )
