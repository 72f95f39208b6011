"""What the SDK raises, read as glove_mcp's errors (``glove_mcp.errors``).

Opening a session fails with whatever escaped the SDK's transport, wrapped in exception groups
(``open_failure`` unwraps and maps it). A request fails with an ``MCPError`` whose meaning
depends on what HTTP answered meanwhile, which the session counts (``request_failure`` says
what it was; the connection decides whether to retry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx2
import mcp_types as types
from mcp.client.auth import OAuthFlowError as SdkOAuthFlowError
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from glove_mcp.connect._http_answer import SESSION_NOT_FOUND_CODE, HttpAnswer
from glove_mcp.connect._mcp_session import Session, leaves
from glove_mcp.errors import (
    GloveMcpError,
    McpAuthExpiredError,
    McpProtocolError,
    McpResponseTooLargeError,
    McpServerUnavailableError,
    McpTimeoutError,
    OAuthFlowError,
)

__all__ = [
    "Answers",
    "RequestFailure",
    "auth_expired",
    "malformed",
    "oauth_advice",
    "open_failure",
    "refusal_since",
    "request_failure",
    "with_refusal",
]


def oauth_advice(exc: SdkOAuthFlowError) -> str:
    """The SDK's OAuth failure in one line, with what to do about it."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if "issuer" in lowered:
        advice = (
            "the authorization server is not the one the MCP server names; check the server "
            "URL, and do not log in until its operator fixes its metadata"
        )
    elif "registration" in lowered:
        advice = (
            "the authorization server refused to register this client; ask its operator for a "
            "client id and pass it as pre_registered_client"
        )
    elif "unsupported_grant_type" in lowered or "unauthorized_client" in lowered:
        advice = "the authorization server does not issue tokens this way for this client"
    elif "invalid_grant" in lowered:
        advice = (
            "the authorization code was not accepted (mistyped, expired or already used); "
            "log in again"
        )
    elif "does not match" in lowered and "resource" in lowered:
        advice = "the server's metadata is for another resource; check the server URL"
    else:
        advice = "check the server URL and log in again"
    return f"{text[:300]} ({advice})"


def auth_expired(namespace: str, url: str, auth: httpx2.Auth | None) -> McpAuthExpiredError:
    """The error for a 401 that a fresh token did not cure, with the auth's last failure."""
    failure = getattr(auth, "last_error", None)
    detail = f"{type(failure).__name__}: {failure}" if failure is not None else None
    login = getattr(failure, "login_command", None)
    return McpAuthExpiredError(
        namespace, url, detail, login=login if isinstance(login, str) else None
    )


def open_failure(
    exc: BaseException,
    session: Session,
    *,
    auth: httpx2.Auth | None,
    what: str,
    timeout: float,
) -> GloveMcpError:
    """Map what opening ``session`` raised to one of our errors."""
    namespace, url = session.namespace, session.url
    if isinstance(exc, GloveMcpError):
        return exc
    found = leaves(exc)
    for leaf in found:
        # A login run by the connection's auth (an OAuth provider) failed: that, not the
        # transport's exception group, is what the caller must see.
        if isinstance(leaf, GloveMcpError):
            return leaf
        if isinstance(leaf, SdkOAuthFlowError):
            return OAuthFlowError(oauth_advice(leaf)).about(namespace, url)
    if session.unauthorized:
        return auth_expired(namespace, url, auth)
    if session.too_large:
        return McpResponseTooLargeError(namespace, url, what, session.max_message_bytes)
    for leaf in found:
        if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
            return McpTimeoutError(namespace, url, what, timeout)
    for leaf in found:
        if session.command and isinstance(leaf, FileNotFoundError | PermissionError):
            program = session.command[0]
            problem = "was not found" if isinstance(leaf, FileNotFoundError) else "may not run"
            return McpServerUnavailableError(
                namespace, url, f"the command {program!r} {problem}", program=program
            )
        if isinstance(leaf, httpx2.TransportError | OSError):
            return McpServerUnavailableError(namespace, url, type(leaf).__name__)
    for leaf in found:
        if isinstance(leaf, MCPError):
            if leaf.error.code == types.CONNECTION_CLOSED:
                return McpServerUnavailableError(namespace, url, "connection closed")
            return McpProtocolError(
                namespace, what, leaf.error.code, with_refusal(leaf.error.message, session.refused)
            )
    if session.refused is not None:
        return McpServerUnavailableError(namespace, url, str(session.refused))
    return McpServerUnavailableError(namespace, url, f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Answers:
    """How many 401, 403 ``insufficient_scope`` and 404 answers a session had had, and how
    many responses it stopped reading at ``max_message_bytes``."""

    unauthorized: int
    insufficient_scope: int
    not_found: int
    too_large: int = 0
    lost: int = 0
    """Refusals saying the server forgot the session (404, 400 "No valid session ID", ...)."""
    refusals: int = 0
    """HTTP answers with a status of 400 or more."""

    @classmethod
    def of(cls, session: Session) -> Answers:
        """The session's counts now."""
        return cls(
            session.unauthorized,
            session.insufficient_scope,
            session.not_found,
            session.too_large,
            session.lost,
            session.refusals,
        )


_SDK_STAND_IN = "Server returned an error response"
"""What the mcp client says for a refusal whose body is not a JSON-RPC error."""


def refusal_since(session: Session, before: Answers) -> HttpAnswer | None:
    """The HTTP refusal (status and first line of its body) a request on ``session`` got
    after ``before``, if it got one."""
    return session.refused if session.refusals > before.refusals else None


def with_refusal(detail: str, refusal: HttpAnswer | None) -> str:
    """A JSON-RPC error's ``detail`` followed by the HTTP refusal that carried it, unless the
    detail already says the same."""
    if refusal is not None and detail == _SDK_STAND_IN:
        return str(refusal)  # the SDK's words for "a refusal it did not read"
    if refusal is None or (refusal.line and refusal.line in detail):
        return detail if refusal is None else f"{detail} (HTTP {refusal.status})"
    return f"{detail} ({refusal})"


RequestFailure = Literal[
    "unauthorized", "insufficient_scope", "too_large", "expired", "timeout", "closed", "error"
]
"""What a failed request ran into: a 401 a fresh token did not cure; a token lacking a scope;
an answer larger than ``max_message_bytes``; the server forgot the session; the server's
timeout; the connection closed; a JSON-RPC error of the server's own."""


def request_failure(exc: MCPError, session: Session, before: Answers) -> RequestFailure:
    """What the ``MCPError`` a request on ``session`` raised means, given the HTTP answers the
    session had had before the request (``Answers.of``)."""
    if session.unauthorized > before.unauthorized:
        return "unauthorized"
    if session.insufficient_scope > before.insufficient_scope:
        return "insufficient_scope"
    if session.too_large > before.too_large:
        return "too_large"
    code = exc.error.code
    if (
        session.not_found > before.not_found
        or session.lost > before.lost
        or code == SESSION_NOT_FOUND_CODE
        or (code == types.INVALID_REQUEST and exc.error.message == "Session terminated")
    ):
        return "expired"
    if code == types.REQUEST_TIMEOUT:
        return "timeout"
    if code == types.CONNECTION_CLOSED or not session.alive:
        return "closed"
    return "error"


def malformed(exc: ValidationError) -> str:
    """Say what was wrong with a server's answer that is not a valid result, briefly (the
    fields, never the values: a result may carry anything)."""
    problems = exc.errors(include_url=False, include_input=False)
    where = sorted({".".join(str(p) for p in e["loc"][1:] or e["loc"]) for e in problems})
    shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
    return f"the server's answer is not a valid result (wrong or missing: {shown})"
