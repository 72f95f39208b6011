"""``run_mcp_oauth``: log in to an MCP server once, from a terminal or a headless box.

The SDK's ``OAuthClientProvider`` (as ``McpOAuthProvider``) does the MCP authorization spec:
discovery from the 401's ``WWW-Authenticate`` and the well-known paths, registration, PKCE,
``resource`` and ``iss`` checks, the code exchange. The login is driven by a real MCP request
on a ``connect_mcp`` connection, so it works with servers that only route ``POST``. This
module supplies the parts around it: the loopback callback listener (bound before
registration), the browser or paste-back prompt, or a caller's ``authorize`` function; the
timeout; the "already logged in" shortcut; the verify call; and undoing a failed login.
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
from urllib.parse import parse_qs, urlencode, urlparse

from mcp.shared.auth import OAuthClientInformationFull

from glove_mcp.auth import bearer
from glove_mcp.connect import McpServerConnection, connect_mcp
from glove_mcp.errors import (
    McpAuthExpiredError,
    OAuthCallbackTimeoutError,
    OAuthFlowError,
    OAuthLoginRequiredError,
    OAuthVerifyError,
)
from glove_mcp.oauth._callback import CallbackReceiver, read_line_in_thread
from glove_mcp.oauth._redirect import listen_address
from glove_mcp.oauth.provider import Authorizer, McpOAuthProvider
from glove_mcp.oauth.state import (
    OAuthClientInfo,
    OAuthState,
    TokenEndpointAuthMethodName,
    build_client_metadata,
    empty_oauth_state,
)
from glove_mcp.oauth.store import OAuthStore
from glove_mcp.oauth.token_source import OAuthTokenSource
from glove_mcp.oauth.url_policy import UrlPolicy

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


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


async def run_mcp_oauth(
    server_url: str,
    store: OAuthStore,
    key: str,
    client_info: Mapping[str, Any] | None = None,
    port: int | None = None,
    redirect_url: str | None = None,
    pre_registered_client: OAuthClientInformationFull | Mapping[str, Any] | None = None,
    scope: str | None = None,
    token_endpoint_auth_method: TokenEndpointAuthMethodName | None = None,
    on_authorize_url: Callable[[str], object] | None = None,
    on_progress: Callable[[str], object] | None = None,
    verify: Literal["list_tools"] | VerifyToolCall | None = "list_tools",
    timeout: float = 300,  # noqa: ASYNC109 - the callback wait, a fixed public name
    open_browser: bool = True,
    *,
    authorize: Authorizer | None = None,
    client_metadata_url: str | None = None,
    url_policy: UrlPolicy | None = None,
) -> OAuthResult:
    """Log in to an MCP server with OAuth and save the tokens in ``store`` under ``key``.

    The login follows the MCP authorization spec: a real MCP request (a POST) gets the
    server's 401, whose ``WWW-Authenticate`` names the resource metadata and scope; then
    protected resource and authorization server discovery (with the well-known fallbacks),
    registration (a Client ID Metadata Document, dynamic registration, or a pre-registered
    client), PKCE, the ``resource`` and ``iss`` checks, the code exchange, and the same request
    again with the new token. Success is reported only when new tokens are stored and that
    request (plus ``verify``) succeeded with them; a failed login leaves the store as it was.

    If the store already holds tokens that work (refreshing them if needed), no browser is
    opened and the status is ``"ALREADY_AUTHORIZED"``.

    Args:
        server_url: the MCP endpoint, e.g. ``https://mcp.notion.com/mcp``.
        store: where client information and tokens are saved.
        key: the store key (e.g. the catalogue entry id).
        client_info: registration metadata (``client_name``, ``client_uri``, …).
        port: the loopback port of the callback listener (0 picks a free one). By default
            the port of ``redirect_url``, else 53683; a ``port`` that disagrees with the
            port ``redirect_url`` names raises ``ValueError``.
        redirect_url: the redirect URL to register, if not ``http://127.0.0.1:<port>/callback``.
            A loopback URL (``http://127.0.0.1:PORT/path``, ``localhost``, ``[::1]``) is
            served by the listener on its port and path; on another host (a hosted page that
            shows the code) no callback can arrive, so the redirected URL is read from stdin
            even when a browser was opened.
        pre_registered_client: a client registered out of band (``client_id``, optional
            ``client_secret`` and ``token_endpoint_auth_method``); skips registration.
        scope: scopes to request, space separated (otherwise those the server's 401 names,
            else those it advertises, else none).
        token_endpoint_auth_method: for dynamic registration; ``none`` by default.
        on_authorize_url: called with the authorization URL; when given, nothing is printed.
        on_progress: called with short progress messages.
        verify: ``"list_tools"``, a ``VerifyToolCall``, or ``None`` (then the opening request
            alone verifies the token).
        timeout: seconds to wait for the person (or ``authorize``) to approve.
        open_browser: open the system browser; when False (or there is no display) the URL is
            printed and the redirected URL or the code is read from stdin (paste-back).
        authorize: complete the authorization step in code: given the authorization URL,
            return the URL the browser was redirected to (or the code). No listener, browser
            or prompt is used; ``redirect_url`` (or the default) is only registered.
        client_metadata_url: an HTTPS URL of this client's metadata document, used as the
            client id where the authorization server supports Client ID Metadata Documents
            (preferred to dynamic registration).
        url_policy: what every URL the login fetches is checked against (default
            ``UrlPolicy()``: https except loopback, no private targets from a server that is
            not on loopback, metadata only from the server's site or the authorization server
            it names). ``UrlPolicy(allow_private=True)`` for development setups.

    Returns:
        The outcome.

    Raises:
        ValueError: ``redirect_url`` and ``port`` disagree, or ``redirect_url`` is unusable.
        OAuthFlowError: the login did not complete (denied, state mismatch, timeout, wrong
            issuer, registration refused, the server needs no login, …);
            ``OAuthUrlRefusedError`` when a URL broke ``url_policy``.
        OAuthVerifyError: the login worked but the verify call failed.
        OAuthStoreError: the store cannot be read or written.
        McpConnectionError: the server cannot be reached.
    """

    def progress(message: str) -> None:
        logger.debug("oauth %s: %s", key, message)
        if on_progress is not None:
            on_progress(message)

    address = listen_address(redirect_url, port)
    policy = url_policy or UrlPolicy()
    already = await _try_stored(server_url, store, key, verify, progress, policy)
    if already is not None:
        return already

    receiver: CallbackReceiver | None = None
    bound = address.port
    if authorize is None:
        receiver = CallbackReceiver(address.host, address.port, address.path)
        # Bound before registration: the redirect URI (with the real port) goes into it.
        bound = await receiver.start()
        if address.reachable:
            progress(f"listening for the OAuth callback on {address.host}:{bound}")
    try:
        redirect = redirect_url or f"http://127.0.0.1:{bound}/callback"
        approve = authorize or _interactive(
            receiver,
            redirect,
            timeout,
            open_browser,
            on_authorize_url,
            progress,
            paste_always=not address.reachable,
        )

        async def announced(url: str) -> str:
            if authorize is not None and on_authorize_url is not None:
                on_authorize_url(url)
            progress("waiting for the authorization")
            try:
                async with asyncio.timeout(timeout):
                    return await approve(url)
            except TimeoutError:
                raise OAuthCallbackTimeoutError(redirect, timeout) from None

        before = await store.get(key)
        await _prepare_client(store, key, server_url, redirect, pre_registered_client)
        metadata = build_client_metadata(
            redirect, dict(client_info) if client_info else None, scope, token_endpoint_auth_method
        )
        try:
            provider = McpOAuthProvider(
                server_url,
                store,
                key,
                metadata,
                hide_stored_tokens=True,
                scope=scope,
                authorize=announced,
                client_metadata_url=client_metadata_url,
                url_policy=policy,
            )
            tool_count, verify_result = await _login(provider, server_url, key, verify, timeout)
            await provider.save_discovery()
        except OAuthFlowError as exc:
            await _restore(store, key, before)
            raise exc.about(key, server_url) from None
        except BaseException:
            await _restore(store, key, before)
            raise
        progress("logged in; tokens saved")
    finally:
        if receiver is not None:
            await receiver.aclose()
    return OAuthResult("AUTHORIZED", key, tool_count, verify_result, redirect)


def _interactive(
    receiver: CallbackReceiver | None,
    redirect: str,
    timeout: float,
    open_browser: bool,
    on_authorize_url: Callable[[str], object] | None,
    progress: Callable[[str], None],
    *,
    paste_always: bool,
) -> Authorizer:
    """The authorizer of a person at a terminal: the browser (or the printed URL), then the
    loopback listener (or paste-back on stdin). ``paste_always``: the redirect cannot reach
    the listener, so stdin is read even after a browser opened."""
    assert receiver is not None
    headless = not open_browser or not _has_display()

    async def approve(url: str) -> str:
        receiver.expect_state(_query_value(url, "state"))
        await _present_url(url, headless, receiver, on_authorize_url, progress, paste_always)
        result = await asyncio.shield(receiver.result)
        query = {"code": result.code, "state": result.state or ""}
        if result.iss is not None:
            query["iss"] = result.iss
        return f"{redirect}?{urlencode(query)}"

    return approve


async def _restore(store: OAuthStore, key: str, before: OAuthState | None) -> None:
    """Put back what the store held before a failed login, so a half-done one (a client
    registered for a login that never completed, no tokens) does not linger."""
    if before is None:
        await store.delete(key)
    else:
        await store.set(key, before)


async def _login(
    provider: McpOAuthProvider,
    server_url: str,
    key: str,
    verify: Literal["list_tools"] | VerifyToolCall | None,
    approval_time: float,
) -> tuple[int | None, Any]:
    """Open a connection with the provider: the server's 401 to its first request runs the
    SDK's flow, then the verify request runs on the logged-in connection."""
    try:
        # The person gets ``approval_time`` to approve; the connection's limit comes on top.
        async with await connect_mcp(
            key, server_url, auth=provider, connect_timeout=approval_time + 30
        ) as conn:
            result = await _check(conn, server_url, verify)
    except McpAuthExpiredError:
        raise OAuthFlowError(
            "the server still answers 401 after the login; check that the account may use it"
        ) from None
    if provider.storage.hide_tokens:
        # No new tokens were saved: the server answered without asking for any.
        raise OAuthFlowError(
            "the server needs no login (it answered without credentials), so no tokens were "
            "saved; connect to it without OAuth"
        )
    return result


async def _try_stored(
    server_url: str,
    store: OAuthStore,
    key: str,
    verify: Literal["list_tools"] | VerifyToolCall | None,
    progress: Callable[[str], None],
    policy: UrlPolicy,
) -> OAuthResult | None:
    state = await store.get(key)
    if state is None or state.tokens is None:
        return None
    if state.server_url is not None and state.server_url != server_url:
        progress(f"stored tokens for {key!r} are for {state.server_url}; logging in again")
        return None
    # bearer() resends once with a refreshed token after a 401.
    source = OAuthTokenSource(store, key, server_url, url_policy=policy)
    try:
        async with await connect_mcp(key, server_url, auth=bearer(source)) as conn:
            count, result = await _check(conn, server_url, verify)
    except (OAuthLoginRequiredError, McpAuthExpiredError):
        progress("stored tokens no longer work; starting a new login")
        return None
    progress("already logged in")
    return OAuthResult("ALREADY_AUTHORIZED", key, count, result, state.redirect_url)


async def _check(
    conn: McpServerConnection,
    server_url: str,
    verify: Literal["list_tools"] | VerifyToolCall | None,
) -> tuple[int | None, Any]:
    """Run the verify request on a connection that already opened with the token."""
    if verify is None:
        return None, None
    if isinstance(verify, VerifyToolCall):
        result = await conn.call_tool(verify.name, verify.arguments)
        text = result.text
        if result.is_error:
            raise OAuthVerifyError(
                f"verify call {verify.name!r} on {server_url} failed: {text[:200]}"
            )
        return None, text
    names = [tool.name for tool in await conn.list_tools()]
    return len(names), names


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
    paste_always: bool,
) -> None:
    if on_authorize_url is not None:
        on_authorize_url(url)
    if not headless:
        opened = await asyncio.to_thread(webbrowser.open, url)
        if opened and not paste_always:
            progress("opened the authorization page in the browser")
            return
        if not opened:
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
