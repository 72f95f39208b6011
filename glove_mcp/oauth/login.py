"""``run_mcp_oauth``: log in to an MCP server once, from a terminal or a headless box.

The SDK's ``OAuthClientProvider`` (as ``McpOAuthProvider``) does discovery, dynamic client
registration, PKCE and the code exchange. This module supplies the parts around it: the
loopback callback listener (bound before registration), the browser or paste-back prompt,
the timeout, the "already logged in" shortcut and the verify call.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

import httpx2
import mcp_types as types
from mcp.client.auth import OAuthFlowError as SdkOAuthFlowError
from mcp.client.auth import OAuthTokenError as SdkOAuthTokenError
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull

from glove_mcp.errors import (
    OAuthCallbackTimeoutError,
    OAuthError,
    OAuthFlowError,
    OAuthLoginRequiredError,
    OAuthVerifyError,
)
from glove_mcp.oauth._callback import CallbackReceiver, read_line_in_thread
from glove_mcp.oauth.provider import McpOAuthProvider
from glove_mcp.oauth.state import (
    OAuthClientInfo,
    TokenEndpointAuthMethodName,
    build_client_metadata,
    empty_oauth_state,
)
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.token_source import OAuthTokenSource

__all__ = ["OAuthResult", "VerifyToolCall", "run_mcp_oauth"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class VerifyToolCall:
    """Verify a login by calling one tool (instead of listing tools).

    Attributes:
        name: the tool.
        arguments: its arguments.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OAuthResult:
    """What ``run_mcp_oauth`` did.

    Attributes:
        status: ``"AUTHORIZED"`` (a login ran) or ``"ALREADY_AUTHORIZED"`` (stored tokens work).
        key: the store key.
        tool_count: how many tools the server lists (when verified by listing).
        verify_result: the tool names (listing) or the tool's text output (tool call);
            ``None`` when ``verify=None``.
        redirect_url: the redirect URL used for the login (``None`` if none ran).
    """

    status: Literal["AUTHORIZED", "ALREADY_AUTHORIZED"]
    key: str
    tool_count: int | None = None
    verify_result: Any = None
    redirect_url: str | None = None


class _Unauthorized(Exception):
    """The MCP server answered 401 to the verify call."""


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


async def run_mcp_oauth(
    server_url: str,
    store: OAuthStore,
    key: str,
    client_info: Mapping[str, Any] | None = None,
    port: int = 53683,
    redirect_url: str | None = None,
    pre_registered_client: OAuthClientInformationFull | Mapping[str, Any] | None = None,
    scope: str | None = None,
    token_endpoint_auth_method: TokenEndpointAuthMethodName | None = None,
    on_authorize_url: Callable[[str], object] | None = None,
    on_progress: Callable[[str], object] | None = None,
    verify: Literal["list_tools"] | VerifyToolCall | None = "list_tools",
    timeout: float = 300,  # noqa: ASYNC109 - the callback wait, a fixed public name
    open_browser: bool = True,
) -> OAuthResult:
    """Log in to an MCP server with OAuth and save the tokens in ``store`` under ``key``.

    If the store already holds tokens that work (refreshing them if needed), no browser is
    opened and the status is ``"ALREADY_AUTHORIZED"``.

    Args:
        server_url: the MCP endpoint, e.g. ``https://mcp.notion.com/mcp``.
        store: where client information and tokens are saved.
        key: the store key (e.g. the catalogue entry id).
        client_info: registration metadata (``client_name``, ``client_uri``, …).
        port: the loopback port of the callback listener (0 picks a free one).
        redirect_url: the redirect URL to register, if not ``http://127.0.0.1:<port>/callback``
            (its path is served by the listener).
        pre_registered_client: a client registered out of band (``client_id``, optional
            ``client_secret`` and ``token_endpoint_auth_method``); skips registration.
        scope: scopes to request, space separated (the server's advertised ones otherwise).
        token_endpoint_auth_method: for dynamic registration; ``none`` by default.
        on_authorize_url: called with the authorization URL; when given, nothing is printed.
        on_progress: called with short progress messages.
        verify: ``"list_tools"``, a ``VerifyToolCall``, or ``None`` to skip verification.
        timeout: seconds to wait for the callback.
        open_browser: open the system browser; when False (or there is no display) the URL is
            printed and the redirected URL or the code is read from stdin (paste-back).

    Returns:
        The outcome.

    Raises:
        OAuthFlowError: the login did not complete (denied, state mismatch, timeout, …).
        OAuthVerifyError: the tokens were saved but the verify call failed.
        OAuthStoreError: the store cannot be read or written.
    """

    def progress(message: str) -> None:
        logger.debug("oauth %s: %s", key, message)
        if on_progress is not None:
            on_progress(message)

    already = await _try_stored(server_url, store, key, verify, progress)
    if already is not None:
        return already

    path = urlparse(redirect_url).path if redirect_url else "/callback"
    receiver = CallbackReceiver("127.0.0.1", port, path)
    # Bound before registration: the redirect URI (with the real port) goes into it.
    bound = await receiver.start()
    try:
        redirect = redirect_url or f"http://127.0.0.1:{bound}/callback"
        progress(f"listening for the OAuth callback on {redirect}")
        await _prepare_client(store, key, server_url, redirect, pre_registered_client)
        metadata = build_client_metadata(
            redirect, dict(client_info) if client_info else None, scope, token_endpoint_auth_method
        )
        headless = not open_browser or not _has_display()

        async def redirect_handler(url: str) -> None:
            receiver.expect_state(_query_value(url, "state"))
            await _present_url(url, headless, receiver, on_authorize_url, progress)

        async def callback_handler() -> AuthorizationCodeResult:
            try:
                async with asyncio.timeout(timeout):
                    return await asyncio.shield(receiver.result)
            except TimeoutError:
                raise OAuthCallbackTimeoutError(redirect, timeout) from None

        provider = McpOAuthProvider(
            server_url,
            store,
            key,
            metadata,
            redirect_handler,
            callback_handler,
            hide_stored_tokens=True,
            scope=scope,
        )
        await _drive_login(provider, server_url, key)
        await provider.save_discovery()
        progress("logged in; tokens saved")
    finally:
        await receiver.aclose()

    source = OAuthTokenSource(store, key, server_url)
    token = await source.access_token()
    try:
        tool_count, verify_result = await _verify(server_url, token, verify, progress)
    except _Unauthorized:
        raise OAuthVerifyError(
            f"the MCP server at {server_url} rejected the token obtained for {key!r} (HTTP 401)"
        ) from None
    return OAuthResult("AUTHORIZED", key, tool_count, verify_result, redirect)


async def _try_stored(
    server_url: str,
    store: OAuthStore,
    key: str,
    verify: Literal["list_tools"] | VerifyToolCall | None,
    progress: Callable[[str], None],
) -> OAuthResult | None:
    state = await store.get(key)
    if state is None or state.tokens is None:
        return None
    if state.server_url is not None and state.server_url != server_url:
        progress(f"stored tokens for {key!r} are for {state.server_url}; logging in again")
        return None
    source = OAuthTokenSource(store, key, server_url)
    try:
        token = await source.access_token()
        try:
            count, result = await _verify(server_url, token, verify, progress)
        except _Unauthorized:
            token = await source.access_token(force_refresh=True)
            count, result = await _verify(server_url, token, verify, progress)
    except (OAuthLoginRequiredError, _Unauthorized):
        progress("stored tokens no longer work; starting a new login")
        return None
    progress("already logged in")
    return OAuthResult("ALREADY_AUTHORIZED", key, count, result, state.redirect_url)


async def _prepare_client(
    store: OAuthStore,
    key: str,
    server_url: str,
    redirect: str,
    pre_registered: OAuthClientInformationFull | Mapping[str, Any] | None,
) -> None:
    state = await store.get(key) or empty_oauth_state(server_url)
    # Old tokens stay until new ones replace them (the provider is told to ignore them), so
    # a login that fails loses nothing.
    update: dict[str, Any] = {"server_url": server_url}
    if pre_registered is not None:
        data = (
            pre_registered.model_dump(exclude_none=True)
            if isinstance(pre_registered, OAuthClientInformationFull)
            else dict(pre_registered)
        )
        data.setdefault("redirect_uris", [redirect])
        if data.get("client_secret") and "token_endpoint_auth_method" not in data:
            data["token_endpoint_auth_method"] = "client_secret_basic"
        update["client"] = OAuthClientInfo.from_sdk(OAuthClientInformationFull.model_validate(data))
    elif state.client is not None:
        registered = state.client.full.get("redirect_uris") or []
        if redirect not in registered or state.server_url != server_url:
            update["client"] = None  # registered for another redirect URI: register again
    await store.set(key, state.model_copy(update=update))


def _query_value(url: str, name: str) -> str | None:
    values = parse_qs(urlparse(url).query).get(name)
    return values[0] if values else None


async def _present_url(
    url: str,
    headless: bool,
    receiver: CallbackReceiver,
    on_authorize_url: Callable[[str], object] | None,
    progress: Callable[[str], None],
) -> None:
    if on_authorize_url is not None:
        on_authorize_url(url)
    if not headless:
        opened = await asyncio.to_thread(webbrowser.open, url)
        if opened:
            progress("opened the authorization page in the browser")
            return
        progress("could not open a browser; falling back to paste-back")
    if on_authorize_url is None:
        # The one place library code writes to the terminal: a headless login must show
        # the URL to the person at the keyboard.
        sys.stderr.write(
            f"Open this URL in a browser and approve access:\n\n  {url}\n\n"
            "Then paste the URL you were redirected to (or just the code) and press Enter:\n"
        )
        sys.stderr.flush()
    progress("waiting for the redirected URL or code on stdin")
    read_line_in_thread(sys.stdin, asyncio.get_running_loop(), receiver)


async def _drive_login(provider: McpOAuthProvider, server_url: str, key: str) -> None:
    """Make one request through the provider: its 401 triggers the SDK's full flow."""
    try:
        async with httpx2.AsyncClient(auth=provider, timeout=30.0) as client:
            response = await client.get(server_url, headers={"Accept": "text/event-stream"})
    except OAuthError:
        raise
    except (SdkOAuthFlowError, SdkOAuthTokenError) as exc:
        raise OAuthFlowError(f"OAuth login for {key!r} at {server_url} failed: {exc}") from None
    except httpx2.HTTPError as exc:
        raise OAuthFlowError(
            f"OAuth login for {key!r}: cannot reach {server_url} ({type(exc).__name__})"
        ) from None
    if response.status_code == 401:
        raise OAuthFlowError(
            f"OAuth login for {key!r}: {server_url} still answers 401 after the login"
        )


async def _verify(
    server_url: str,
    token: str,
    verify: Literal["list_tools"] | VerifyToolCall | None,
    progress: Callable[[str], None],
) -> tuple[int | None, Any]:
    if verify is None:
        return None, None
    progress("verifying the token against the MCP server")
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30.0, read=300.0),
        event_hooks={"response": [record]},
    )
    try:
        async with (
            client,
            streamable_http_client(server_url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            if isinstance(verify, VerifyToolCall):
                result = await session.call_tool(verify.name, verify.arguments)
                text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
                if result.is_error:
                    raise OAuthVerifyError(
                        f"verify call {verify.name!r} on {server_url} failed: {text[:200]}"
                    )
                return None, text
            names: list[str] = []
            cursor: str | None = None
            while True:
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                names.extend(tool.name for tool in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return len(names), names
    except Exception as exc:
        # The transport wraps everything (ours included) in nested exception groups.
        leaf = _leaf(exc)
        if isinstance(leaf, OAuthVerifyError):
            raise leaf from None
        if 401 in statuses:
            raise _Unauthorized from None
        raise OAuthVerifyError(
            f"verifying the login against {server_url} failed: {type(leaf).__name__}: {leaf}"
        ) from None


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
