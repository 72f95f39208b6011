"""Where the callback listener of ``run_mcp_oauth`` listens, from the redirect URL.

The browser goes where the redirect URL says, so the listener must bind that URL's host and
port; binding another port (as a ``port=`` that disagrees with ``redirect_url`` once made it
do) leaves the login waiting for a callback that goes elsewhere. A redirect URL on another
machine (a hosted page showing the code) cannot reach a listener at all: the person pastes
the redirected URL instead.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlparse

__all__ = ["DEFAULT_CALLBACK_PORT", "ListenAddress", "listen_address"]

DEFAULT_CALLBACK_PORT = 53683
"""The loopback port used when neither ``port=`` nor a redirect URL names one."""


@dataclass(frozen=True)
class ListenAddress:
    """Where to listen for the authorization response.

    Attributes:
        host: the loopback interface to bind.
        port: the port to bind (0: any free one, then the redirect URL is built from it).
        path: the callback path the listener serves.
        reachable: whether the browser's redirect can reach the listener; when not, the
            person pastes the redirected URL.
    """

    host: str
    port: int
    path: str
    reachable: bool


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen_address(redirect_url: str | None, port: int | None) -> ListenAddress:
    """The listener's address for a login.

    Args:
        redirect_url: the redirect URL to register, if the caller chose one.
        port: the caller's ``port=``, or None when not given.

    Raises:
        ValueError: the redirect URL is not an http(s) URL, is a loopback ``https`` URL (the
            listener speaks plain HTTP), or names a port other than ``port``.
    """
    if port is not None and not 0 <= port <= 65535:
        raise ValueError(f"port must be 0-65535, got {port!r}")
    if redirect_url is None:
        chosen = DEFAULT_CALLBACK_PORT if port is None else port
        return ListenAddress("127.0.0.1", chosen, "/callback", reachable=True)
    parsed = urlparse(redirect_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"redirect_url must be an http(s) URL with a host, got {redirect_url!r}")
    path = parsed.path or "/"
    if not _is_loopback(parsed.hostname):
        # The listener still holds the login's state for paste-back; any free port will do.
        return ListenAddress("127.0.0.1", 0, path, reachable=False)
    if parsed.scheme == "https":
        raise ValueError(
            f"redirect_url {redirect_url!r} is a loopback https URL, but the callback listener "
            "speaks plain HTTP: use http://127.0.0.1:PORT/... (RFC 8252 allows http for "
            "loopback redirects)"
        )
    try:
        named = parsed.port if parsed.port is not None else 80
    except ValueError:
        raise ValueError(f"redirect_url {redirect_url!r} has an invalid port") from None
    if named == 0:
        raise ValueError(f"redirect_url {redirect_url!r} names port 0; give the real port")
    if port is not None and port != named:
        raise ValueError(
            f"redirect_url {redirect_url!r} names port {named} but port={port}: the browser "
            f"is sent to {named}, so the listener must bind it; drop port= or make them agree"
        )
    host = "::1" if parsed.hostname == "::1" else "127.0.0.1"
    return ListenAddress(host, named, path, reachable=True)
