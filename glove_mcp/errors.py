"""Exceptions raised by glove_mcp.

A failure the *model* can act on (a tool call the server rejected, a server that is down) never
raises out of a bridged tool: it becomes a tool result with ``status="error"``. What is raised
here is for the *caller* of ``connect_mcp``, ``McpServerConnection`` and ``McpMount``::

    GloveMcpError
    ├── McpConnectionError          the server could not be reached or the link broke: retry later
    │   ├── McpServerUnavailableError   connection refused, reset or dropped
    │   ├── McpTimeoutError             no answer in time; the next call reconnects
    │   └── McpSessionExpiredError      the server forgot the session twice in a row
    ├── McpAuthExpiredError          the server refused even fresh credentials: log in again
    ├── McpInsufficientScopeError    the token lacks a scope (403): log in again asking for it
    ├── McpProtocolError             the server answered with a JSON-RPC error
    ├── McpResponseTooLargeError     an answer was over max_message_bytes and not read: ask for
    │                                less, or raise the limit for a server you trust
    ├── McpCapabilityError           the server does not offer resources (or prompts, …): ask
    │                                only for what it declares
    ├── McpTaskError                 a task-augmented tool call ended without a result
    │   ├── McpTaskCancelledError    the server cancelled the task: call the tool again
    │   └── McpTaskTimeoutError      the task outlived max_wait and was cancelled: raise it
    ├── McpStateError                a connection or mount used after close (fix your code)
    │   └── McpServerNotLoadedError  the mount has no open connection to that server: activate it
    ├── McpActivationError           a server could not be activated; nothing was left loaded
    │   └── McpUnknownServerError    the id is not in the catalogue
    └── OAuthError                   OAuth login, token refresh or token storage failed
        ├── OAuthLoginRequiredError  no usable tokens: run the login command again
        │   └── OAuthRefreshRejectedError  the server refused the refresh token
        ├── OAuthRefreshError        refresh failed for a passing reason (network, 5xx): retry
        ├── OAuthRevocationError     the authorization server did not revoke the tokens
        ├── OAuthFlowError           the interactive login did not complete
        │   ├── OAuthAuthorizationDeniedError  consent refused (the callback had error=)
        │   ├── OAuthStateMismatchError  the callback's state is not the one we sent
        │   ├── OAuthCallbackTimeoutError  no callback arrived in time
        │   └── OAuthUrlRefusedError  a URL breaks the URL policy (in glove_mcp.oauth)
        ├── OAuthVerifyError         logged in, but the verify call against the server failed
        └── OAuthStoreError          an OAuth store could not be read or written
            ├── OAuthStoreCorruptError   the stored data is damaged: fix or delete it
            ├── OAuthStoreVersionError   written by a newer version: upgrade glove
            └── OAuthKeyringUnavailableError  no OS keyring backend: use FsOAuthStore

Messages name the server, the state and the fix; they never contain tokens or headers.
"""

from __future__ import annotations

__all__ = [
    "MAX_ERROR_DETAIL_CHARS",
    "GloveMcpError",
    "McpActivationError",
    "McpAuthExpiredError",
    "McpCapabilityError",
    "McpConnectionError",
    "McpInsufficientScopeError",
    "McpProtocolError",
    "McpResponseTooLargeError",
    "McpServerNotLoadedError",
    "McpServerUnavailableError",
    "McpSessionExpiredError",
    "McpStateError",
    "McpTaskCancelledError",
    "McpTaskError",
    "McpTaskTimeoutError",
    "McpTimeoutError",
    "McpUnknownServerError",
    "OAuthAuthorizationDeniedError",
    "OAuthCallbackTimeoutError",
    "OAuthError",
    "OAuthFlowError",
    "OAuthKeyringUnavailableError",
    "OAuthLoginRequiredError",
    "OAuthRefreshError",
    "OAuthRefreshRejectedError",
    "OAuthRevocationError",
    "OAuthStateMismatchError",
    "OAuthStoreCorruptError",
    "OAuthStoreError",
    "OAuthStoreVersionError",
    "OAuthVerifyError",
]


MAX_ERROR_DETAIL_CHARS = 2_000
"""A server's error message (``McpProtocolError.detail``) beyond this many characters is cut."""


def _redacted(url: str) -> str:
    from glove_core.redaction import redact_url  # here: --help and status never load glove_core

    return redact_url(url)


class GloveMcpError(Exception):
    """Base class of every exception glove_mcp raises on purpose."""


class McpConnectionError(GloveMcpError):
    """The server could not be reached, or the connection broke.

    Attributes:
        server: the server's namespace (catalogue id).
        url: the server's endpoint.
    """

    def __init__(self, server: str, url: str, message: str) -> None:
        self.server, self.url = server, (url := _redacted(url))
        super().__init__(message)


class McpServerUnavailableError(McpConnectionError):
    """Connection refused, reset or closed by the server, or a stdio command that could not
    start (then ``program`` names it; ``reason`` says what went wrong)."""

    def __init__(self, server: str, url: str, reason: str, *, program: str | None = None) -> None:
        url = _redacted(url)
        self.reason, self.program = reason, program
        if program is not None:
            message = (
                f"MCP server {server!r} could not be started: {reason}. Install it, or fix "
                "the command of its catalogue entry; the next call tries again."
            )
        else:
            where = f"at {url}" if url else "(stdio)"
            message = (
                f"MCP server {server!r} {where} is unreachable ({reason}). Check that it is "
                "running; the next call reconnects."
            )
        super().__init__(server, url, message)


class McpTimeoutError(McpConnectionError):
    """The server did not answer in time."""

    def __init__(self, server: str, url: str, what: str, seconds: float | None) -> None:
        url = _redacted(url)
        self.what, self.seconds = what, seconds
        limit = f" within {seconds:g} s" if seconds is not None else ""
        super().__init__(
            server,
            url,
            f"MCP server {server!r} at {url} did not answer {what}{limit}. The next call "
            "reconnects; raise the timeout if the tool is slow.",
        )


class McpSessionExpiredError(McpConnectionError):
    """The server forgot the session (404) again right after a re-initialize."""

    def __init__(self, server: str, url: str) -> None:
        url = _redacted(url)
        super().__init__(
            server,
            url,
            f"MCP server {server!r} at {url} expired the session again right after it was "
            "re-initialized; the server is dropping sessions. The next call starts a new one.",
        )


class McpAuthExpiredError(GloveMcpError):
    """The server answered 401 to the credentials, and again to a freshly resolved token.

    Attributes:
        server: the server's namespace (catalogue id).
        url: the server's endpoint.
    """

    def __init__(
        self, server: str, url: str, source_error: str | None = None, *, login: str | None = None
    ) -> None:
        self.server, self.url = server, (url := _redacted(url))
        self.source_error = source_error
        why = f" The auth source failed: {source_error}." if source_error else ""
        advice = (
            f"Log in again ({login})"  # the application's login command, when it named one
            if login
            else "Refresh or re-issue the token (e.g. log in again with run_mcp_oauth) and store "
            "it where get_access_token reads it"
        )
        super().__init__(
            f"MCP server {server!r} at {url} rejected the credentials (401), also after asking "
            f"the auth source for a fresh token.{why} {advice}; the next call picks it up."
        )


class McpInsufficientScopeError(GloveMcpError):
    """The server refused a request because the token lacks a scope (403 insufficient_scope).

    A connection whose auth is an ``McpOAuthProvider`` with ``authorize=`` steps up by itself;
    this is raised where nobody can approve more access (a bearer token, a token source).

    Attributes:
        server: the server's namespace.
        url: the server's endpoint.
        scope: the scope the server asked for, if it said.
    """

    def __init__(self, server: str, url: str, scope: str | None) -> None:
        self.server, self.url = server, (url := _redacted(url))
        self.scope = scope
        needs = f"scope {scope!r}" if scope else "a scope it does not have"
        super().__init__(
            f"MCP server {server!r} at {url} refused the request: the token lacks {needs} "
            "(403 insufficient_scope). Log in again asking for it (run_mcp_oauth(..., "
            "scope=...)), or connect with McpOAuthProvider(..., authorize=...) to step up."
        )


class McpProtocolError(GloveMcpError):
    """The server answered a request with a JSON-RPC error.

    Attributes:
        server: the server's namespace.
        code: the JSON-RPC error code.
    """

    def __init__(self, server: str, what: str, code: int, detail: str) -> None:
        self.server = server
        self.code = code
        if len(detail) > MAX_ERROR_DETAIL_CHARS:
            # The server chooses the message, of any size; it reaches logs and models.
            cut = len(detail) - MAX_ERROR_DETAIL_CHARS
            detail = f"{detail[:MAX_ERROR_DETAIL_CHARS]}… [{cut:,} more characters not shown]"
        self.detail = detail
        super().__init__(f"MCP server {server!r} answered {what} with error {code}: {detail}")


class McpResponseTooLargeError(GloveMcpError):
    """The server's answer was larger than ``max_message_bytes``, so it was not read; the
    session stays open.

    Attributes:
        server: the server's namespace.
        url: the server's endpoint.
        limit: the limit, in bytes.
    """

    def __init__(self, server: str, url: str, what: str, limit: int) -> None:
        self.server, self.url = server, (url := _redacted(url))
        self.limit = limit
        super().__init__(
            f"MCP server {server!r} at {url} answered {what} with a message larger than "
            f"{limit:,} bytes (max_message_bytes), so it was not read. Ask for less (a "
            "narrower query, a page), or raise max_message_bytes for a server you trust."
        )


class McpCapabilityError(GloveMcpError):
    """The server did not declare the capability a request needs, so it would only refuse it.

    Attributes:
        server: the server's namespace.
        capability: the MCP capability it lacks (``"resources"``, ``"prompts"``).
    """

    def __init__(self, server: str, capability: str) -> None:
        self.server = server
        self.capability = capability
        super().__init__(
            f"MCP server {server!r} does not offer {capability}: it did not declare the "
            f"{capability!r} capability. Use its tools instead, or a server that offers "
            f"{capability}."
        )


class McpStateError(GloveMcpError):
    """A connection or mount was used in a state that forbids it (e.g. after close)."""


class McpServerNotLoadedError(McpStateError):
    """A mount was asked about a server of its catalogue that is not loaded right now.

    Attributes:
        server: the catalogue id.
    """

    def __init__(self, server: str, loaded: list[str]) -> None:
        self.server = server
        names = ", ".join(repr(k) for k in loaded) or "none"
        super().__init__(
            f"MCP server {server!r} is not loaded in this mount (loaded: {names}); "
            f"activate it first with `await mount.activate({server!r})`"
        )


class McpActivationError(GloveMcpError):
    """A server could not be activated; its connection was closed and no tool stayed folded.

    Attributes:
        server: the catalogue id.
    """

    def __init__(self, server: str, reason: str) -> None:
        self.server = server
        self.reason = reason
        super().__init__(f"MCP server {server!r} could not be activated: {reason}")


class McpUnknownServerError(McpActivationError):
    """The id is not in the mount's catalogue."""

    def __init__(self, server: str, known: list[str]) -> None:
        names = ", ".join(repr(k) for k in sorted(known)) or "none"
        super().__init__(
            server, f"it is not in the catalogue (known ids: {names}); add an McpCatalogueEntry"
        )


# OAuth (issue 8).


class OAuthError(GloveMcpError):
    """Base class of the OAuth helpers' errors (``glove_mcp.oauth``)."""


class OAuthLoginRequiredError(OAuthError):
    """There are no usable tokens for a key: a person must log in again.

    Attributes:
        key: the store key (usually the catalogue entry id).
        login_command: what to run to log in again.
        reason: why the stored tokens cannot be used.
    """

    def __init__(self, key: str, login_command: str, reason: str) -> None:
        self.key = key
        self.login_command = login_command
        self.reason = reason
        super().__init__(
            f"OAuth login required for {key!r}: {reason}. Log in again with: {login_command}"
        )


class OAuthRefreshRejectedError(OAuthLoginRequiredError):
    """The authorization server rejected the refresh token (revoked, expired or rotated away).

    Attributes:
        error: the OAuth error code the server answered (e.g. ``invalid_grant``).
    """

    def __init__(self, key: str, login_command: str, error: str, description: str | None) -> None:
        self.error = error
        detail = f"{error}: {description}" if description else error
        super().__init__(
            key, login_command, f"the authorization server rejected the refresh token ({detail})"
        )


class OAuthRefreshError(OAuthError):
    """A token refresh failed for a reason that may pass (network error, server error); the
    stored tokens are left untouched, retry later. ``login_command``: what to run if it keeps
    failing, when the token source knows it."""

    login_command: str | None = None


class OAuthRevocationError(OAuthError):
    """The authorization server did not confirm the revocation of a key's tokens (RFC 7009).

    The tokens may still work at the server; they are left in the store, so revoking can be
    tried again.

    Attributes:
        key: the store key.
        endpoint: the revocation endpoint.
        reason: what went wrong (an HTTP status and OAuth error, or a network error's kind).
    """

    def __init__(self, key: str, endpoint: str, reason: str) -> None:
        self.key, self.endpoint, self.reason = key, (endpoint := _redacted(endpoint)), reason
        super().__init__(
            f"revoking the tokens of {key!r} at {endpoint} failed ({reason}); they may still "
            "work at the server and are kept in the store: try again, or revoke the app's "
            "access in the provider's account settings"
        )


class OAuthFlowError(OAuthError):
    """The login (discovery, registration, authorize, callback, code exchange) did not
    complete; the store holds what it held before.

    Attributes:
        key: the store key of the login, once known.
        server_url: the MCP server of the login, once known.
    """

    key: str | None = None
    server_url: str | None = None

    def about(self, key: str, server_url: str) -> OAuthFlowError:
        """Name the login this error belongs to (its message then starts with it).

        Returns:
            The error itself, for ``raise exc.about(...)``.
        """
        self.key, self.server_url = key, _redacted(server_url)
        return self

    def __str__(self) -> str:
        text = super().__str__()
        if self.server_url is None:
            return text
        return f"OAuth login for {self.key!r} at {self.server_url} failed: {text}"


class OAuthAuthorizationDeniedError(OAuthFlowError):
    """The authorization server redirected back with ``error=`` (usually ``access_denied``).

    Attributes:
        error: the OAuth error code from the callback.
        description: the server's ``error_description``, if any.
    """

    def __init__(self, error: str, description: str | None) -> None:
        self.error = error
        self.description = description
        detail = f" ({description})" if description else ""
        super().__init__(
            f"authorization was not granted: {error}{detail}. Approve the request in the "
            "browser when you run the login again, or check the account's permissions."
        )


class OAuthStateMismatchError(OAuthFlowError):
    """The callback carried a ``state`` other than the one this login sent (possible CSRF)."""

    def __init__(self) -> None:
        super().__init__(
            "the OAuth callback's state parameter does not match this login's state, so it was "
            "rejected (it may come from another login attempt or a forged link). Run the login "
            "again and finish it in the browser tab it opens."
        )


class OAuthCallbackTimeoutError(OAuthFlowError):
    """No authorization callback arrived before the timeout.

    Attributes:
        redirect_url: where the callback was expected.
        timeout: the timeout in seconds.
    """

    def __init__(self, redirect_url: str, timeout: float) -> None:
        self.redirect_url, self.timeout = redirect_url, timeout
        super().__init__(
            f"no OAuth callback reached {redirect_url} within {timeout:g} s. Run the login "
            "again and approve it in the browser; on a machine without a browser use "
            "open_browser=False and paste the redirected URL (or the code) when asked."
        )


class OAuthVerifyError(OAuthError):
    """Tokens were obtained but the verify call against the MCP server failed."""


class OAuthStoreError(OAuthError):
    """An OAuth store could not be read or written."""


class OAuthStoreCorruptError(OAuthStoreError):
    """The stored OAuth data is damaged; it is never overwritten automatically.

    Attributes:
        where: the file path or keyring entry.
        reason: what is wrong with it.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(
            f"OAuth store {where} is corrupt ({reason}); it was left untouched. Fix it or "
            "delete it and log in again."
        )


class OAuthStoreVersionError(OAuthStoreError):
    """The stored OAuth data was written in a newer format than this version understands.

    Attributes:
        where: the file path or keyring entry.
        found: the format version found.
        supported: the newest format version this version reads.
    """

    def __init__(self, where: str, found: int, supported: int) -> None:
        self.where = where
        self.found = found
        self.supported = supported
        super().__init__(
            f"OAuth store {where} has format version {found}, but this version of glove reads "
            f"up to {supported}; upgrade glove (the store was left untouched)."
        )


class OAuthKeyringUnavailableError(OAuthStoreError):
    """No OS keyring backend is available.

    Attributes:
        service: the keyring service name.
        detail: the keyring error's class name.
    """

    def __init__(self, service: str, detail: str) -> None:
        self.service = service
        self.detail = detail
        super().__init__(
            f"no OS keyring is available for service {service!r} ({detail}); on a headless "
            "box use FsOAuthStore(path) instead of KeyringOAuthStore"
        )


class McpTaskError(GloveMcpError):
    """A task-augmented tool call ended without a result (base of the task errors).

    Attributes:
        tool: the tool that was called.
        task_id: the server's task id.
        status: the task's last known status.
        status_message: the server's last status message, if any.
    """

    def __init__(
        self, message: str, *, tool: str, task_id: str, status: str, status_message: str | None
    ) -> None:
        super().__init__(message)
        self.tool = tool
        self.task_id = task_id
        self.status = status
        self.status_message = status_message


class McpTaskCancelledError(McpTaskError):
    """The server reports the task as cancelled (not by this call): there is no result."""

    def __init__(self, *, tool: str, task_id: str, status_message: str | None) -> None:
        note = f" ({status_message})" if status_message else ""
        super().__init__(
            f"tool '{tool}': task {task_id} was cancelled on the server{note}; "
            "call the tool again for a result",
            tool=tool,
            task_id=task_id,
            status="cancelled",
            status_message=status_message,
        )


class McpTaskTimeoutError(McpTaskError, TimeoutError):
    """The task did not finish within ``max_wait`` or the poll cap; ``tasks/cancel`` was sent."""

    def __init__(
        self, *, tool: str, task_id: str, status: str, status_message: str | None, limit: str
    ) -> None:
        super().__init__(
            f"tool '{tool}': task {task_id} still '{status}' after {limit}; it was cancelled — "
            "raise max_wait if the tool is expected to take longer",
            tool=tool,
            task_id=task_id,
            status=status,
            status_message=status_message,
        )
        self.limit = limit
