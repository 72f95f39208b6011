"""Connecting MCP servers per principal for the headless server: ``Connections``, the
``ConnectionService`` its routes (``glove_mcp.server.connections``) drive.

Each principal's credential is kept per resource (``BoundLogin``); a flow started by
``start`` waits in the server's database and completes in ``finish`` on any instance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx2

from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.errors import OAuthRevocationError
from glove_mcp.oauth.binding import BoundLogin
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.web_flow import begin_web_authorization, finish_web_authorization
from glove_mcp.server.connection_flows import FLOW_TTL, FlowStore, PendingFlow
from glove_mcp.server.connections import ConnectionRefused, browser_digest

__all__ = ["Connections"]

logger = logging.getLogger(__name__)


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

    def server_name(self, server_id: str) -> str | None:
        """The display name of an HTTP server of the catalogue, or None when there is none."""
        entry = self.entries.get(server_id)
        return entry.name if entry is not None and entry.url else None

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
        data = {**started.flow, "browser": browser_digest(browser)}
        flow = PendingFlow(principal, server_id, entry.url, time.time() + self.flow_ttl, data)
        await flows.put(started.state, flow)
        return started.authorize_url

    async def finish(self, flow: PendingFlow, code: str, iss: str | None) -> str:
        """Exchange the code and store the tokens for the flow's principal and server; the
        server's name."""
        entry = self.entries.get(flow.server_id)
        if entry is None or entry.url != flow.server_url:
            raise ConnectionRefused(409, "the server's URL changed while it was being connected")
        http, owned = await self._client()
        try:
            state = await finish_web_authorization(flow.data, flow.server_url, code, iss, http=http)
        finally:
            if owned:
                await http.aclose()
        login = self.login(flow.principal, flow.server_id)
        await self.store.set(login.key, state)
        return entry.name

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
