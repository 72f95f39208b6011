"""Bearer JWTs from an identity provider as principals of the headless server.

``JwtAuthenticator`` checks a token's signature against the provider's published keys (a
JWKS: from OpenID discovery, ``<issuer>/.well-known/openid-configuration``, unless its URL is
given), then its ``iss``, ``aud``, ``exp`` and ``nbf`` with a small clock skew. The principal
is the token's ``sub`` (or another claim); its scopes are the token's ``scope`` (a
space-separated string) or ``scp`` (a list).

Only asymmetric algorithms are accepted (RS*, PS*, ES*, EdDSA): a token with ``alg=none``, or
an HS* token signed with a public key as its secret (algorithm confusion), is refused before
any key is used. The keys are cached; a token naming an unknown ``kid`` fetches them again
(rotation), at most once per ``refetch_interval`` seconds, with concurrent requests sharing
one fetch. The crypto is ``joserfc``'s.

A token that passed every check is remembered (by its SHA-256, up to ``cache_size`` tokens)
until its ``exp``, so a client sending the same token on every request pays for the
signature check once, not each time (an RS256 check costs about as much as a whole cached
request). A remembered token stays valid until it expires even if its key is withdrawn from
the JWKS meanwhile — as with any token an API accepted a moment earlier.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

import httpx2
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jws import extract_compact
from starlette.requests import HTTPConnection

from glove_mcp.server.principals import Principal, bearer_token, check_principal_name

__all__ = ["ASYMMETRIC_ALGORITHMS", "JwksError", "JwtAuthenticator"]

logger = logging.getLogger(__name__)

ASYMMETRIC_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""The signature algorithms a token may use: public-key ones only."""

_MAX_TOKEN = 16 * 1024
_MAX_JWKS = 256 * 1024


class JwksError(Exception):
    """The provider's keys could not be fetched or read (the message names the URL)."""


def _check_url(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        try:
            loopback = ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if loopback:
            return url
    raise ValueError(f"{what} must be an https:// URL (http:// only on a loopback host): {url}")


class JwtAuthenticator:
    """Bearer JWTs signed by an identity provider.

    Args:
        issuer: the provider's issuer URL; tokens must carry it as ``iss``.
        audience: what tokens must carry in ``aud`` (this server's identifier at the provider).
        jwks_url: the provider's JWKS; default: its OpenID discovery document's ``jwks_uri``.
        principal_claim: the claim naming the principal (default ``sub``); its value must be a
            valid principal name (see ``Principal``).
        leeway: seconds of clock skew allowed on ``exp`` and ``nbf`` (default 30).
        refetch_interval: fewest seconds between two fetches of the keys (default 60).
        timeout: seconds a fetch may take (default 10).
        client: the HTTP client to fetch with (default: one of its own).
        cache_size: valid tokens remembered until they expire (default 10,000; 0: none).
        clock: monotonic seconds (the refetch interval).
        wall_clock: seconds since the epoch (``exp``, ``nbf``).

    Raises:
        ValueError: a URL is not ``https://`` (``http://`` is allowed on loopback only).
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        jwks_url: str | None = None,
        principal_claim: str = "sub",
        leeway: int = 30,
        refetch_interval: float = 60.0,
        timeout: float = 10.0,
        client: httpx2.AsyncClient | None = None,
        cache_size: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = _check_url(issuer, "the JWT issuer")
        self.audience = audience
        self.jwks_url = None if jwks_url is None else _check_url(jwks_url, "the JWKS URL")
        self.principal_claim = principal_claim
        self.leeway = leeway
        self.refetch_interval = refetch_interval
        self._timeout = timeout
        self._client = client
        self._own_client = client is None
        self._clock = clock
        self._wall_clock = wall_clock
        self._cache_size = cache_size
        # sha256(token) -> (principal, exp): tokens that passed every check
        self._valid: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()
        self._keys: KeySet | None = None
        self._fetched_at: float | None = None
        self._fetching: asyncio.Task[KeySet] | None = None
        self._registry = jwt.JWTClaimsRegistry(
            now=lambda: int(wall_clock()),
            leeway=leeway,
            iss={"essential": True, "value": issuer},
            aud={"essential": True, "value": audience},
            exp={"essential": True},
            sub={"essential": principal_claim == "sub"},
        )

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        """See ``Authenticator``: the token's principal, or None for any bad token."""
        token = bearer_token(request)
        if token is None or token.count(b".") != 2 or len(token) > _MAX_TOKEN:
            return None
        return await self.verify(token)

    async def verify(self, token: bytes) -> Principal | None:
        """The principal of a compact JWT, or None when it is not valid here."""
        digest = hashlib.sha256(token).digest()
        remembered = self._valid.get(digest)
        if remembered is not None:
            principal, expires = remembered
            if self._wall_clock() <= expires + self.leeway:
                return principal
            del self._valid[digest]
        checked = await self._check(token)
        if checked is None:
            return None
        if self._cache_size > 0:
            self._valid[digest] = checked
            while len(self._valid) > self._cache_size:
                self._valid.popitem(last=False)  # the longest remembered first
        return checked[0]

    async def _check(self, token: bytes) -> tuple[Principal, float] | None:
        try:
            header = extract_compact(token).headers()
        except (JoseError, ValueError, TypeError):
            return None
        alg = header.get("alg")
        if alg not in ASYMMETRIC_ALGORITHMS:
            return None  # none, HS*: never, whatever key the token names
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            return None
        keys = await self._key_set(kid)
        if keys is None:
            return None
        try:
            decoded = jwt.decode(token, keys, algorithms=list(ASYMMETRIC_ALGORITHMS))
            self._registry.validate(decoded.claims)
        except (JoseError, ValueError, TypeError):
            return None
        claims = decoded.claims
        try:
            name = check_principal_name(claims.get(self.principal_claim))
        except ValueError:
            return None
        exp = claims.get("exp")
        if not isinstance(exp, int | float):
            return None
        return Principal(name, _scopes(claims)), float(exp)

    async def _key_set(self, kid: str | None) -> KeySet | None:
        keys = self._keys
        if keys is not None and (kid is None or _has_kid(keys, kid)):
            return keys
        # Unknown kid (a rotation) or nothing fetched yet: fetch, at most once per interval.
        now = self._clock()
        if (
            keys is not None
            and self._fetched_at is not None
            and now - self._fetched_at < self.refetch_interval
        ):
            return None
        if self._fetching is None:
            self._fetching = asyncio.create_task(self._fetch())
        fetching = self._fetching
        try:
            keys = await asyncio.shield(fetching)
        except JwksError as exc:
            logger.warning("JWT keys: %s", exc)
            return None
        finally:
            if fetching.done() and self._fetching is fetching:
                self._fetching = None
        if kid is not None and not _has_kid(keys, kid):
            return None
        return keys

    async def _fetch(self) -> KeySet:
        # Counted from the attempt, failed or not: an unreachable provider is not hammered.
        self._fetched_at = self._clock()
        url = self.jwks_url or await self._discover()
        document = await self._get_json(url)
        try:
            keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise JwksError(f"{url}: not a usable JWKS ({type(exc).__name__})") from None
        self._keys = keys
        return keys

    async def _discover(self) -> str:
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        document = await self._get_json(url)
        found = document.get("jwks_uri")
        if not isinstance(found, str):
            raise JwksError(f"{url}: the discovery document names no jwks_uri")
        try:
            self.jwks_url = _check_url(found, "the JWKS URL")
        except ValueError as exc:
            raise JwksError(f"{url}: {exc}") from None
        return self.jwks_url

    async def _get_json(self, url: str) -> dict[str, Any]:
        client = self._client
        if client is None:
            client = self._client = httpx2.AsyncClient(timeout=self._timeout)
        try:
            response = await client.get(url, follow_redirects=False)
        except httpx2.HTTPError as exc:
            raise JwksError(f"{url}: unreachable ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise JwksError(f"{url}: answered {response.status_code}")
        if len(response.content) > _MAX_JWKS:
            raise JwksError(f"{url}: larger than {_MAX_JWKS} bytes")
        try:
            document = json.loads(response.content)
        except ValueError:
            raise JwksError(f"{url}: not JSON") from None
        if not isinstance(document, dict):
            raise JwksError(f"{url}: not a JSON object")
        return document

    async def aclose(self) -> None:
        """Close the HTTP client it made."""
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def __repr__(self) -> str:
        return f"JwtAuthenticator(issuer={self.issuer!r}, audience={self.audience!r})"


def _has_kid(keys: KeySet, kid: str) -> bool:
    return any(key.kid == kid for key in keys.keys)


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(s for s in scp if isinstance(s, str))
    return frozenset()
