"""``UrlPolicy``: which URLs an OAuth login or refresh may fetch.

An MCP server's 401 names its metadata, the metadata names an authorization server, that
server's metadata names the registration, token and revocation endpoints. Each of those URLs
comes from whoever runs the server, so each is checked before anything is sent to it:

- ``http`` and ``https`` only (``file:``, ``data:``, … refused);
- ``https``, except to a loopback host (development servers on 127.0.0.1, ``localhost``, ``::1``);
- an ``https`` MCP server's login never goes over ``http`` (not even to loopback), unless the
  application allows private targets (``allow_private=True``, development only);
- from a server that is not on loopback, no loopback or link-local target (the cloud metadata
  address 169.254.169.254 among them), and from a public server no private target (10/8,
  172.16/12, 192.168/16, fc00::/7, …), unless ``allow_private=True``;
- metadata documents (protected-resource and authorization-server metadata) only from the MCP
  server's site or from an authorization server the protected-resource metadata names — the
  spec's trust chain; endpoints named by the authorization server's metadata are held to the
  rules above (the spec lets an authorization server put them on another host).

Redirects are not followed across origins (the SDK follows them within the origin, and each
hop passes through this check too). A refusal raises ``OAuthUrlRefusedError``: one line naming
the URL (redacted) and the rule.

Host names are resolved to check their addresses (``resolve``, the seam tests use to make a
loopback test server look public). The connection resolves again, so a name whose DNS answer
changes between the two (DNS rebinding) is not caught; an application that must resist that
pins its resolver in its transport.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import httpx2

from glove_core.redaction import redact_url
from glove_mcp.errors import OAuthFlowError

__all__ = ["OAuthUrlRefusedError", "Resolver", "UrlPolicy", "UrlRole", "guard_auth_flow"]


class OAuthUrlRefusedError(OAuthFlowError):
    """A URL the login was led to (metadata, registration, token, revocation) breaks the
    URL policy; nothing was sent to it.

    Attributes:
        url: the URL, redacted (no user-info, query or fragment).
        rule: the rule it breaks.
    """

    def __init__(self, url: str, rule: str) -> None:
        self.url = url
        self.rule = rule
        super().__init__(f"refused to fetch {url}: {rule}")


IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

Resolver = Callable[[str], Awaitable[Sequence[str]]]
"""``resolve(host) -> addresses``: the IP addresses a host name stands for (as strings). Given
an IP literal it returns it. An empty answer means the host does not resolve (the request is
then let through and fails to connect)."""

UrlRole = Literal["metadata", "endpoint"]
"""What a URL is fetched for: a metadata document (held to the trust chain) or an endpoint the
authorization server's metadata named (registration, token, revocation)."""

_Reach = Literal["loopback", "link-local", "private", "public"]
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


async def _system_resolve(host: str) -> Sequence[str]:
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    if host.lower() in _LOOPBACK_NAMES or host.lower().endswith(".localhost"):
        return ["127.0.0.1"]
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(info[4][0]) for info in found]


def _reach(address: IpAddress) -> _Reach:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_global:
        return "public"
    return "private"


def _site(url: str) -> str:
    """The URL's site. A name of three labels or more loses its first (``mcp.example.com``
    and ``auth.example.com`` are one site); an IP address or a one-label name (``localhost``)
    keeps its port, since nothing but the port tells two services there apart. Without the
    public-suffix list ``a.co.uk`` and ``b.co.uk`` count as one site: the address rules
    still hold there."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    labels = host.split(".")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if len(labels) >= 3:
            return ".".join(labels[1:])
        if len(labels) == 2:
            return host
    return f"{host}:{_port(url)}"


def _port(url: str) -> int:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return port if port is not None else (443 if parts.scheme.lower() == "https" else 80)


@dataclass(frozen=True)
class UrlPolicy:
    """The rules for every URL an OAuth login or refresh fetches (see the module docstring).

    Attributes:
        allow_private: let an MCP server that is not on loopback lead the login to private,
            loopback and link-local addresses, and let an ``https`` server's login use
            ``http`` on loopback. For development setups only (default False; the
            ``glove-mcp`` flag is ``--allow-private-oauth``).
        resolve: how host names are resolved for the address checks (default: the system
            resolver in a thread-free asyncio call). The seam for tests that make a loopback
            test server count as public.
    """

    allow_private: bool = False
    resolve: Resolver | None = None

    async def _reach(self, host: str) -> _Reach | None:
        resolve = self.resolve or _system_resolve
        reaches: list[_Reach] = []
        for text in await resolve(host):
            try:
                reaches.append(_reach(ipaddress.ip_address(text.split("%")[0])))
            except ValueError:
                continue
        if not reaches:
            return None
        # A name that resolves to several addresses is as inside as its most inside one.
        for level in ("loopback", "link-local", "private"):
            if level in reaches:
                return level
        return "public"

    async def check(
        self,
        url: str,
        *,
        server_url: str,
        role: UrlRole = "endpoint",
        trusted: Iterable[str] = (),
    ) -> None:
        """Raise ``OAuthUrlRefusedError`` if the login of ``server_url`` may not fetch ``url``.

        Args:
            url: the URL about to be fetched.
            server_url: the MCP server whose login (or refresh) fetches it.
            role: ``"metadata"`` for a metadata document (then it must be on the server's
                site or on one of ``trusted``), ``"endpoint"`` otherwise.
            trusted: URLs of authorization servers the server's metadata named.

        Raises:
            OAuthUrlRefusedError: the URL breaks a rule; the message names it.
        """
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()

        def refuse(rule: str) -> OAuthUrlRefusedError:
            return OAuthUrlRefusedError(redact_url(url), rule)

        if scheme not in ("http", "https") or not host:
            raise refuse("only http(s) URLs with a host are fetched")
        server = urlsplit(server_url)
        server_reach = await self._reach((server.hostname or "").lower())
        target = await self._reach(host)
        if scheme == "http":
            if target != "loopback":
                raise refuse("https is required (plain http only to a loopback host)")
            if server.scheme.lower() == "https" and not self.allow_private:
                raise refuse(
                    "an https server's login never goes over http (allow private targets "
                    "to use a loopback http authorization server in development)"
                )
        if not self.allow_private and target is not None and server_reach != "loopback":
            # A server inside a private network may name others there; none may lead the
            # login to this machine or to link-local addresses (cloud metadata services).
            inside = target in ("loopback", "link-local") or (
                target == "private" and server_reach != "private"
            )
            if inside:
                raise refuse(
                    f"a {target} address, named by a server that is not on loopback (allow "
                    "private targets only for development)"
                )
        sites = {_site(server_url), *(_site(t) for t in trusted)}
        if role == "metadata" and _site(url) not in sites:
            raise refuse(
                "metadata must come from the MCP server's own site or an authorization "
                "server its metadata names"
            )


MetadataTrust = Callable[[], Iterable[str]]
"""Returns the authorization servers the protected-resource metadata named so far."""


def _is_metadata(request: httpx2.Request) -> bool:
    # The SDK fetches metadata documents with GET and sends registration and token requests
    # with POST; a GET that is not the MCP request itself is a metadata document.
    return request.method == "GET"


async def guard_auth_flow(
    flow: AsyncGenerator[httpx2.Request, httpx2.Response],
    request: httpx2.Request,
    policy: UrlPolicy,
    server_url: str,
    trusted: MetadataTrust,
) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
    """Drive an ``httpx2.Auth`` flow, checking every request it makes other than the MCP
    request it authenticates (redirect hops included) before it is sent.

    Args:
        flow: the SDK's flow for ``request``.
        request: the MCP request being authenticated (the application chose its URL).
        policy: the rules.
        server_url: the MCP server.
        trusted: the authorization servers named so far (read at each request).

    Yields:
        The requests to send, as the SDK's flow would.
    """
    try:
        outgoing = await flow.__anext__()
        while True:
            if outgoing is not request:
                role: UrlRole = "metadata" if _is_metadata(outgoing) else "endpoint"
                await policy.check(
                    str(outgoing.url), server_url=server_url, role=role, trusted=trusted()
                )
            response = yield outgoing
            outgoing = await flow.asend(response)
    except StopAsyncIteration:
        return
    finally:
        # Closing the SDK's flow releases the lock it holds while suspended; a refusal
        # raised without this would leave it held and the next request would fail on it.
        await flow.aclose()
