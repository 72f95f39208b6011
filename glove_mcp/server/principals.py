"""Who is calling the headless server: principals, and the authenticators that name them.

Every request to ``HeadlessServer`` (except the routes marked public) is authenticated to a
``Principal`` — a name and a set of scopes — by an ``Authenticator``. The server keeps it on
the request as ``request.state.principal``; sessions belong to the principal that created them.

Authenticators shipped here:

- ``ApiKeys``: bearer keys looked up by their SHA-256 digest (a keys file, ``--keys FILE``, or
  the single ``GLOVE_API_KEY`` of principal ``default``). One lookup in a dict, whatever the
  number of keys; the keys themselves are never kept, logged or compared byte by byte.
- ``JwtAuthenticator`` (``glove_mcp.server.jwt_auth``): bearer JWTs from an identity provider.
- ``FirstOf``: the first of several that recognises the request.

An application plugs in its own (a header set by its proxy, its session cookie) by giving
``HeadlessServer(authenticator=...)`` any object with ``async authenticate(request)``.

Keys file (TOML)::

    [[keys]]
    principal = "alice"
    key_sha256 = "<64 hex digits: sha256 of the key>"   # printf %s KEY | sha256sum
    scopes = ["admin"]                                   # optional
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import time
import tomllib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

__all__ = [
    "ADMIN_SCOPE",
    "DEFAULT_PRINCIPAL",
    "MIN_KEY_LENGTH",
    "ApiKeys",
    "Authenticator",
    "FailureThrottle",
    "FirstOf",
    "KeysFileError",
    "Principal",
    "bearer_token",
    "building_for",
    "check_key",
    "check_principal_name",
    "key_digest",
    "session_owner",
]

ADMIN_SCOPE = "admin"
"""The scope that lets a principal list and read every session."""

DEFAULT_PRINCIPAL = "default"
"""The principal of ``GLOVE_API_KEY`` (``HeadlessServer(api_key=)``), and the owner of every
session created before sessions had owners."""

MIN_KEY_LENGTH = 20
"""Shortest API key accepted: a shorter one is refused at start-up, however it is given."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:+-]{0,127}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_SCOPE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True)
class Principal:
    """Who a request comes from.

    Attributes:
        name: the principal's name (1-128 characters from ``[A-Za-z0-9_.@:+-]``, starting
            with a letter or digit); sessions are stored under it.
        scopes: what else it may do; ``"admin"`` lists and reads every session.
    """

    name: str
    scopes: frozenset[str] = field(default_factory=frozenset)

    @property
    def is_admin(self) -> bool:
        """Whether the principal has the ``admin`` scope."""
        return ADMIN_SCOPE in self.scopes


@runtime_checkable
class Authenticator(Protocol):
    """Names the principal of a request, or None when it carries no valid credential.

    The server answers None with 401 (and counts it against the client's address, see
    ``FailureThrottle``). An authenticator must not log or raise with the credential in the
    message.
    """

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        """The request's principal, or None."""
        ...


_OWNER: ContextVar[str | None] = ContextVar("glove_session_owner", default=None)


def session_owner() -> str:
    """The principal owning the session whose agent is being built: call it from
    ``HeadlessServer``'s agent factory (e.g. to pick that principal's MCP credentials).

    Raises:
        LookupError: called outside an agent factory.
    """
    owner = _OWNER.get()
    if owner is None:
        raise LookupError("session_owner() is only known inside the server's agent factory")
    return owner


@contextlib.contextmanager
def building_for(owner: str) -> Iterator[None]:
    """Make ``session_owner()`` answer ``owner`` in the block (the server wraps its agent
    factory in it)."""
    token = _OWNER.set(owner)
    try:
        yield
    finally:
        _OWNER.reset(token)


def check_principal_name(name: object) -> str:
    """``name`` if it is a valid principal name.

    Raises:
        ValueError: it is not (the message says what a name may be).
    """
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ValueError(
            "a principal name is 1-128 characters from [A-Za-z0-9_.@:+-], starting with a "
            "letter or digit"
        )
    return name


def key_digest(key: str | bytes) -> str:
    """The hex SHA-256 of a key (of its UTF-8 bytes), as a keys file holds it."""
    data = key.encode("utf-8") if isinstance(key, str) else key
    return hashlib.sha256(data).hexdigest()


def bearer_token(request: HTTPConnection) -> bytes | None:
    """The bytes of the request's ``Authorization: Bearer`` credential, or None."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    # Starlette decodes header bytes as latin-1; encoding back gives the bytes sent, which a
    # client with a non-ASCII key sends as UTF-8.
    return token.strip().encode("latin-1")


class KeysFileError(ValueError):
    """A keys file that cannot be used; the message is one line naming the file and entry."""


class ApiKeys:
    """Bearer keys, each of one principal, looked up by their SHA-256 digest.

    Presenting a key costs one SHA-256 of it and one dict lookup, the same with one key or
    a thousand; no key is kept, only digests.

    Args:
        digests: hex SHA-256 digest of each key → its principal.
    """

    def __init__(self, digests: Mapping[str, Principal]) -> None:
        self._principals: dict[str, Principal] = {}
        for digest, principal in digests.items():
            lowered = digest.lower()
            if _DIGEST.fullmatch(lowered) is None:
                raise ValueError("a key digest is 64 hex digits (SHA-256)")
            self._principals[lowered] = principal

    @classmethod
    def single(cls, key: str, principal: str = DEFAULT_PRINCIPAL) -> ApiKeys:
        """One key for one principal (``GLOVE_API_KEY`` is this with ``default``).

        Raises:
            ValueError: the key is shorter than ``MIN_KEY_LENGTH`` characters (or blank).
        """
        check_key(key)
        return cls({key_digest(key): Principal(check_principal_name(principal))})

    @classmethod
    def from_file(cls, path: str | Path) -> ApiKeys:
        """The keys of a TOML keys file (see the module's docstring).

        Raises:
            KeysFileError: the file cannot be read, is not TOML, or an entry is bad (a missing
                or unknown field, a malformed or repeated digest, an odd principal name or
                scope); the message is one line naming the entry.
        """
        return cls(read_keys_file(path))

    def __len__(self) -> int:
        return len(self._principals)

    def merged(self, other: ApiKeys) -> ApiKeys:
        """These keys and ``other``'s (``other`` wins on a repeated digest)."""
        return ApiKeys({**self._principals, **other._principals})

    def principal_of(self, key: bytes) -> Principal | None:
        """The principal of a presented key, or None."""
        return self._principals.get(hashlib.sha256(key).hexdigest())

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        """See ``Authenticator``: the bearer key's principal."""
        token = bearer_token(request)
        return None if token is None else self.principal_of(token)

    def __repr__(self) -> str:
        return f"ApiKeys({len(self._principals)} keys)"


def check_key(key: str) -> str:
    """``key`` if it is long enough to be an API key.

    Raises:
        ValueError: shorter than ``MIN_KEY_LENGTH`` characters, or blank around.
    """
    if len(key.strip()) < MIN_KEY_LENGTH:
        raise ValueError(
            f"an API key must be at least {MIN_KEY_LENGTH} characters (got {len(key)}); "
            "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return key


_FIELDS = {"principal", "key_sha256", "scopes"}


def read_keys_file(path: str | Path) -> dict[str, Principal]:
    """Digest → principal of a keys file; see ``ApiKeys.from_file``."""
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8"
        raise KeysFileError(f"{shown}: cannot read the keys file: {reason}") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KeysFileError(f"{shown}: not valid TOML: {exc}") from None
    extra = sorted(set(document) - {"keys"})
    if extra:
        raise KeysFileError(f"{shown}: unknown table {extra[0]!r}: the file holds [[keys]] only")
    entries = document.get("keys")
    if not isinstance(entries, list) or not entries:
        raise KeysFileError(f"{shown}: no [[keys]] entries")
    found: dict[str, Principal] = {}
    first: dict[str, int] = {}
    for number, entry in enumerate(entries, start=1):
        where = f"{shown}: [[keys]] entry {number}"
        if not isinstance(entry, dict):
            raise KeysFileError(f"{where}: must be a table ([[keys]])")
        if isinstance(entry.get("principal"), str):
            where += f" (principal {entry['principal'][:60]!r})"
        unknown = sorted(set(entry) - _FIELDS)
        if unknown:
            hint = " (the file holds key_sha256, never the key)" if "key" in unknown else ""
            raise KeysFileError(f"{where}: unknown field {unknown[0]!r}{hint}")
        for name in ("principal", "key_sha256"):
            if name not in entry:
                raise KeysFileError(f"{where}: missing field {name!r}")
        try:
            name = check_principal_name(entry["principal"])
        except ValueError as exc:
            raise KeysFileError(f"{where}: {exc}") from None
        digest = entry["key_sha256"]
        if not isinstance(digest, str) or _DIGEST.fullmatch(digest.lower()) is None:
            raise KeysFileError(
                f"{where}: key_sha256 must be 64 hex digits, the SHA-256 of the key "
                "(printf %s KEY | sha256sum)"
            )
        digest = digest.lower()
        if digest in first:
            raise KeysFileError(f"{where}: key_sha256 repeats entry {first[digest]}'s")
        scopes = entry.get("scopes", [])
        if not isinstance(scopes, list) or not all(
            isinstance(s, str) and _SCOPE.fullmatch(s) for s in scopes
        ):
            raise KeysFileError(f'{where}: scopes must be a list of names, e.g. scopes = ["admin"]')
        first[digest] = number
        found[digest] = Principal(name, frozenset(scopes))
    return found


class FirstOf:
    """The first of several authenticators that names the request's principal.

    Args:
        authenticators: asked in order.
    """

    def __init__(self, *authenticators: Authenticator) -> None:
        self.authenticators = authenticators

    async def authenticate(self, request: HTTPConnection) -> Principal | None:
        """See ``Authenticator``."""
        for authenticator in self.authenticators:
            principal = await authenticator.authenticate(request)
            if principal is not None:
                return principal
        return None

    def __repr__(self) -> str:
        return f"FirstOf({', '.join(repr(a) for a in self.authenticators)})"


class FailureThrottle:
    """Failed authentications per client address: too many, and the address waits.

    Each address may fail ``burst`` times; each failure beyond refills at ``per_second``.
    While an address is over its budget every request from it gets 429 with ``Retry-After``
    before its credential is looked at (so a right guess is no different from a wrong one);
    other addresses, and valid requests meanwhile, are not slowed at all.

    Args:
        burst: failures an address may have at once (default 20).
        per_second: failures forgiven per second (default 0.5: one every two seconds).
        max_addresses: addresses remembered; the least recently failing are forgotten first.
        clock: monotonic seconds.
    """

    def __init__(
        self,
        burst: int = 20,
        per_second: float = 0.5,
        *,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if burst < 1:
            raise ValueError(f"burst must be 1 or more, got {burst}")
        if not per_second > 0:
            raise ValueError(f"per_second must be more than 0, got {per_second}")
        self.burst = burst
        self.per_second = per_second
        self._max = max_addresses
        self._clock = clock
        # address -> (failures counted, when last counted); the least recent first
        self._failures: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _level(self, address: str, now: float) -> float:
        held = self._failures.get(address)
        if held is None:
            return 0.0
        count, since = held
        return max(0.0, count - (now - since) * self.per_second)

    def retry_after(self, address: str) -> int | None:
        """Seconds the address must wait before trying again, or None when it may try now."""
        now = self._clock()
        over = self._level(address, now) + 1 - self.burst  # what one more failure would be
        if over <= 0:
            return None
        return max(1, math.ceil(over / self.per_second))

    def failed(self, address: str) -> None:
        """Count one failure of ``address``."""
        now = self._clock()
        level = self._level(address, now) + 1
        self._failures[address] = (level, now)
        self._failures.move_to_end(address)
        while len(self._failures) > self._max:
            self._failures.popitem(last=False)

    def addresses(self) -> Iterable[str]:
        """The addresses with failures remembered."""
        return iter(self._failures)
