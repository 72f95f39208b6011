"""Connecting MCP servers over HTTP, per principal: ``Connections`` and its routes.

- ``GET /connections`` lists the catalogue's HTTP servers with the principal's state
  (``connected``, ``needs_login`` or ``open``), expiry and scopes.
- ``POST /connections/{server_id}`` starts authorization code + PKCE
  (``begin_web_authorization``) and answers ``{"authorize_url"}``; the flow waits in the
  server's database (``_connection_flows``), single use, for ten minutes.
- ``GET /oauth/callback`` needs no API key — the state is the credential, and a cookie set on
  the browser that started the flow must come back with it — exchanges the code and stores
  the tokens for the flow's principal and the server's resource; every failure is a small
  page with a 4xx status and stores nothing.
- ``DELETE /connections/{server_id}`` revokes (RFC 7009, when offered) and forgets.

The routes get the principal through ``principal_of(request)`` after ``authenticate``; the
callback route is public.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import inspect
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx2
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from glove_mcp._connection_flows import FLOW_TTL, FlowStore, PendingFlow
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.errors import OAuthError, OAuthRevocationError
from glove_mcp.oauth.binding import BoundLogin
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.web_flow import begin_web_authorization, finish_web_authorization
from glove_mcp.principals import Principal

__all__ = [
    "CALLBACK_PATH",
    "Connections",
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


def default_principal(request: Request) -> Principal:
    """The principal of the single ``GLOVE_API_KEY``: ``default``."""
    return Principal("default")


class Connections:
    """The catalogue's HTTP servers, connected per principal through the server's routes.

    Args:
        entries: the catalogue.
        store: where tokens are kept, per principal and resource (``credential_key``).
        client_info: registration metadata (``client_name``, …) for dynamic registration.
        clients: pre-registered clients per server id (``client_id``, optional
            ``client_secret`` and ``token_endpoint_auth_method``); those servers skip
            registration.
        client_metadata_url: an HTTPS URL of this client's metadata document (a Client ID
            Metadata Document), used where the authorization server supports it.
        http_client: for discovery, registration, token and revocation requests (not closed
            here); a short-lived one per request otherwise.
        flow_ttl: seconds an authorization may take (default 600).
    """

    def __init__(
        self,
        entries: Sequence[McpCatalogueEntry],
        store: OAuthStore,
        *,
        client_info: Mapping[str, Any] | None = None,
        clients: Mapping[str, Mapping[str, Any]] | None = None,
        client_metadata_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        flow_ttl: float = FLOW_TTL,
    ) -> None:
        if flow_ttl <= 0:
            raise ValueError(f"flow_ttl must be more than 0 seconds, got {flow_ttl}")
        self.entries = {e.id: e for e in entries}
        self.store = store
        self.client_info = dict(client_info) if client_info else {"client_name": "Glove"}
        self.clients = {k: dict(v) for k, v in (clients or {}).items()}
        self.client_metadata_url = client_metadata_url
        self.flow_ttl = flow_ttl
        self._http = http_client
        self._logins: dict[tuple[str, str], BoundLogin] = {}
        self._open: set[str] = set()

    def __repr__(self) -> str:
        return f"Connections(servers={sorted(self.entries)!r}, store={self.store!r})"

    @staticmethod
    def connect_step(server_id: str) -> str:
        """What connects a server, as the agent and the page say it."""
        return f"POST /connections/{server_id} (Connect in the page's Servers panel)"

    def login(self, principal: str, server_id: str) -> BoundLogin:
        """The principal's login for one server (one per pair, so refreshes stay single
        flight)."""
        found = self._logins.get((principal, server_id))
        if found is None:
            entry = self.entries[server_id]
            found = BoundLogin(
                self.store,
                principal,
                server_id,
                entry.url,
                self.connect_step(server_id),
                http_client=self._http,
            )
            self._logins[(principal, server_id)] = found
        return found

    def tokens(self, principal: str) -> dict[str, BoundLogin]:
        """Token sources per server id for the principal's agents
        (``SqliteMcpAdapter(tokens=)``): never another principal's credential."""
        return {i: self.login(principal, i) for i, e in self.entries.items() if e.url}

    def with_connect_hints(self) -> list[McpCatalogueEntry]:
        """The entries, each telling the agent to connect it through the route."""
        hinted = []
        for entry in self.entries.values():
            if entry.url and "login_command" not in entry.metadata:
                metadata = {**entry.metadata, "login_command": self.connect_step(entry.id)}
                entry = entry.model_copy(update={"metadata": metadata})
            hinted.append(entry)
        return hinted

    async def listing(self, principal: str) -> list[dict[str, Any]]:
        """The principal's view of every HTTP server of the catalogue."""
        rows = []
        for entry in self.entries.values():
            if not entry.url:
                continue
            check = await self.login(principal, entry.id).check()
            state: str = check.state
            if state == "needs_login" and entry.id in self._open:
                state = "open"
            row: dict[str, Any] = {
                "id": entry.id,
                "name": entry.name,
                "url": entry.url,
                "state": state,
                "expires_at": check.expires_at,
                "scopes": list(check.scopes),
            }
            if check.stale:
                row["detail"] = check.reason
            rows.append(row)
        return rows

    async def _client(self) -> tuple[httpx2.AsyncClient, bool]:
        if self._http is not None:
            return self._http, False
        return httpx2.AsyncClient(timeout=30.0, follow_redirects=False), True

    async def start(
        self, principal: str, server_id: str, redirect_uri: str, flows: FlowStore, browser: str
    ) -> str | None:
        """Begin an authorization; the authorization URL, or None (the server needs no
        login)."""
        entry = self.entries[server_id]
        http, owned = await self._client()
        try:
            started = await begin_web_authorization(
                entry.url,
                redirect_uri,
                http=http,
                client_info=self.client_info,
                pre_registered_client=self.clients.get(server_id),
                client_metadata_url=self.client_metadata_url,
            )
        finally:
            if owned:
                await http.aclose()
        if started is None:
            self._open.add(server_id)
            return None
        data = {**started.flow, "browser": _digest(browser)}
        flow = PendingFlow(principal, server_id, entry.url, time.time() + self.flow_ttl, data)
        await flows.put(started.state, flow)
        return started.authorize_url

    async def finish(self, flow: PendingFlow, code: str, iss: str | None) -> McpCatalogueEntry:
        """Exchange the code and store the tokens for the flow's principal and server."""
        entry = self.entries.get(flow.server_id)
        if entry is None or entry.url != flow.server_url:
            raise _Refused(409, "the server's URL changed while it was being connected")
        http, owned = await self._client()
        try:
            state = await finish_web_authorization(flow.data, flow.server_url, code, iss, http=http)
        finally:
            if owned:
                await http.aclose()
        login = self.login(flow.principal, flow.server_id)
        await self.store.set(login.key, state)
        return entry

    async def disconnect(self, principal: str, server_id: str) -> str:
        """Revoke (when the authorization server offers it) and forget the principal's
        tokens for the server: ``revoked``, ``no_revocation_endpoint``, ``no_tokens`` or
        ``revocation_failed`` (forgotten here all the same)."""
        login = self.login(principal, server_id)
        if await login.bound_state() is None:
            await login.forget()
            return "no_tokens"
        try:
            outcome: str = await login.source.revoke()
        except OAuthRevocationError as exc:
            logger.warning("revoking %r for a principal failed: %s", server_id, exc.reason)
            outcome = "revocation_failed"
        await login.forget()
        return outcome


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


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
    connections: Connections,
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
        server_id = request.path_params["server_id"]
        entry = connections.entries.get(server_id)
        if entry is None or not entry.url:
            raise HTTPException(404, f"no HTTP server {server_id!r} in the catalogue")
        return str(server_id)

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
        name = (
            connections.entries[flow.server_id].name
            if flow.server_id in connections.entries
            else flow.server_id
        )
        if flow.expires_at < time.time():
            return _page(400, "Not connected", f"The authorization of {name} expired. Start again.")
        cookie = request.cookies.get(_COOKIE, "")
        if not hmac.compare_digest(_digest(cookie), str(flow.data.get("browser", ""))):
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
            entry = await connections.finish(flow, code, query.get("iss"))
        except _Refused as exc:
            return _page(exc.status, "Not connected", exc.message)
        except OAuthError as exc:
            logger.info("connecting %r failed: %s", flow.server_id, exc)
            return _page(400, "Not connected", f"{name} was not connected: {exc}")
        except httpx2.HTTPError as exc:
            return _page(502, "Not connected", f"{name} was not connected: {type(exc).__name__}")
        page = _page(200, f"Connected: {entry.name}", "You can close this tab.")
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
    connections: Connections | None,
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
