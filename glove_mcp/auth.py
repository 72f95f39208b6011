"""Credentials for MCP connections, resolved on every HTTP request.

Each helper returns an ``McpAuth`` — an ``httpx2.Auth`` — that asks its source for headers
right before each request, so a token refreshed in the application's store is picked up without
reconnecting. When the server answers 401, the flow asks the source once more for a *fresh*
token and, if it got a different one, resends the request once. A 401 that survives this is
left to the connection, which reports ``auth_expired``.

A token source may be a string, a function (sync or async) returning one, or an object with
``async access_token(*, force_refresh=False)`` (``TokenSource``, e.g. an OAuth token source);
only the latter is told that a fresh token is wanted after a 401, a function is simply called
again.

An adapter gives credentials by implementing ``AccessTokens`` (``get_access_token(id, *,
fresh=False)``) and/or ``AuthHeaders`` (``get_auth_headers(id)``); ``adapter_auth`` checks which
of the two protocols it implements, nothing else.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

import httpx2

__all__ = [
    "AccessTokens",
    "AuthHeaders",
    "HeadersProvider",
    "McpAuth",
    "TokenProvider",
    "TokenSource",
    "adapter_auth",
    "bearer",
    "headers",
]

_T = TypeVar("_T")

logger = logging.getLogger(__name__)


@runtime_checkable
class TokenSource(Protocol):
    """An object that hands out access tokens and can be asked for a fresh one."""

    async def access_token(self, *, force_refresh: bool = False) -> str | None:
        """Return a valid access token (None or "": none, no header is sent); with
        ``force_refresh`` the current one was just rejected (401), so refresh it or re-read it
        from the store."""
        ...


@runtime_checkable
class AccessTokens(Protocol):
    """An adapter that gives a bearer token per server (``McpAdapter``'s optional part)."""

    async def get_access_token(self, id: str, *, fresh: bool = False) -> str | None:
        """The token for server ``id``, or None; ``fresh=True`` right after the server
        rejected the last one (401): refresh it or re-read it from the store."""
        ...


@runtime_checkable
class AuthHeaders(Protocol):
    """An adapter that gives HTTP headers per server; they win over ``AccessTokens``."""

    async def get_auth_headers(self, id: str) -> Mapping[str, str] | None:
        """The headers for server ``id``, or None to fall back to a bearer token."""
        ...


class _Named(Protocol):
    @property
    def identifier(self) -> str: ...


TokenProvider = str | Callable[[], str | Awaitable[str | None] | None] | TokenSource
"""A bearer token: a string, a function returning one (sync or async), or a ``TokenSource``."""

HeadersProvider = Mapping[str, str] | Callable[[], Mapping[str, str] | Awaitable[Mapping[str, str]]]
"""HTTP headers: a mapping, or a function returning one (sync or async)."""


async def _maybe_await(value: _T | Awaitable[_T]) -> _T:
    if inspect.isawaitable(value):
        return await value
    return value


class McpAuth(httpx2.Auth):
    """Base of the auth helpers: resolves headers per request and retries once after a 401.

    Subclasses implement ``resolve(fresh=...)``. The object never shows credentials in its
    ``repr``.
    """

    # The request may be sent twice (after a 401): keep its body.
    requires_request_body = True

    last_error: Exception | None = None
    """Why the source last failed to give credentials (None after a success). A failing source
    (e.g. an OAuth token source that needs a new login) does not break the connection: the
    request goes out without credentials, the server answers 401, and the caller gets
    ``auth_expired`` naming this error."""

    async def resolve(self, *, fresh: bool) -> dict[str, str]:
        """Return the headers to put on a request.

        Args:
            fresh: True right after the server rejected the previous headers with 401.
        """
        raise NotImplementedError

    def sync_auth_flow(self, request: httpx2.Request) -> Any:  # pragma: no cover - async only
        raise RuntimeError("glove_mcp auth works with httpx2.AsyncClient only")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.requires_request_body:
            await request.aread()
        sent = await self._resolve_safely(fresh=False)
        request.headers.update(sent)
        response = yield request
        if response.status_code != 401:
            return
        again = await self._resolve_safely(fresh=True)
        if again == sent:
            # The same credentials would get the same answer; let the 401 through.
            return
        for name in sent:
            if name not in again:
                del request.headers[name]
        request.headers.update(again)
        yield request

    async def _resolve_safely(self, *, fresh: bool) -> dict[str, str]:
        try:
            found = await self.resolve(fresh=fresh)
        except Exception as exc:
            # Raising here would tear down the whole MCP session inside the SDK's transport
            # and surface as "connection closed"; a 401 tells the caller the truth.
            self.last_error = exc
            # Our OAuth errors are worded for people and carry no secrets; anything else is
            # named by its type only (an application's exception may quote a token).
            from glove_mcp.errors import OAuthError

            why = f"{type(exc).__name__}: {exc}" if isinstance(exc, OAuthError) else None
            login = getattr(exc, "login_command", None)
            logger.warning(
                "%s could not get its credentials (%s); sending the request without them%s",
                self.label,
                why or type(exc).__name__,
                f". If this persists, log in again: {login}" if isinstance(login, str) else "",
            )
            return {}
        self.last_error = None
        return found

    @property
    def label(self) -> str:
        """Who these credentials are for, as log lines name it."""
        return repr(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} (credentials hidden)>"


class _BearerAuth(McpAuth):
    def __init__(self, token: TokenProvider) -> None:
        self._token = token

    async def resolve(self, *, fresh: bool) -> dict[str, str]:
        source = self._token
        if isinstance(source, str):
            value: str | None = source
        elif isinstance(source, TokenSource):
            value = await source.access_token(force_refresh=fresh)
        else:
            value = await _maybe_await(source())
        return {"Authorization": f"Bearer {value}"} if value else {}


class _HeadersAuth(McpAuth):
    def __init__(self, source: HeadersProvider) -> None:
        self._source = source

    async def resolve(self, *, fresh: bool) -> dict[str, str]:
        source = self._source
        value = source() if callable(source) else source
        return dict(await _maybe_await(value))


class _AdapterAuth(McpAuth):
    def __init__(self, adapter: _Named, server_id: str) -> None:
        self._adapter = adapter
        self._server_id = server_id

    async def resolve(self, *, fresh: bool) -> dict[str, str]:
        adapter = self._adapter
        if isinstance(adapter, AuthHeaders):
            found = await adapter.get_auth_headers(self._server_id)
            if found:
                return dict(found)
        if isinstance(adapter, AccessTokens):
            token = await adapter.get_access_token(self._server_id, fresh=fresh)
            if token:
                return {"Authorization": f"Bearer {token}"}
        return {}

    @property
    def label(self) -> str:
        return f"MCP server {self._server_id!r}"

    def __repr__(self) -> str:
        return f"<adapter_auth {self._adapter.identifier!r}/{self._server_id!r}>"


def bearer(token_or_fn: TokenProvider) -> McpAuth:
    """Send ``Authorization: Bearer <token>`` on every request.

    Args:
        token_or_fn: the token; or a function (sync or async) called before every request;
            or a ``TokenSource``, asked with ``force_refresh=True`` after a 401. A function or
            source returning ``None`` or ``""`` sends no header.

    Example:
        >>> auth = bearer(lambda: store.token)  # re-read before every request
    """
    return _BearerAuth(token_or_fn)


def headers(map_or_fn: HeadersProvider) -> McpAuth:
    """Send the given headers (e.g. an API key header) on every request.

    Args:
        map_or_fn: the headers, or a function (sync or async) called before every request.
    """
    return _HeadersAuth(map_or_fn)


def adapter_auth(adapter: _Named, id: str) -> McpAuth:
    """Resolve credentials for server ``id`` through an ``McpAdapter`` on every request.

    An adapter that implements ``AuthHeaders`` and returns headers wins; otherwise one that
    implements ``AccessTokens`` gives a bearer token; with neither, no header is sent. After a
    401 the adapter is asked again with ``fresh=True``, so an application that refreshed the
    token in its store is picked up.
    """
    return _AdapterAuth(adapter, id)
