"""What an HTTP server said when it refused a request: its status and the first line of its
body, bounded and redacted, for our errors; and whether it said the session is gone.

Servers say "I forgot your session" three ways: the specification's 404; HTTP 400 with a
JSON-RPC error whose text says so (the TypeScript SDK: ``-32000 "Bad Request: No valid session
ID provided"``; others: "Session not found"); or the JSON-RPC code ``-32001`` whatever the
status. Each means the request was refused before it ran, so it is safe to open a new session
and send it again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from glove_core.redaction import redact_url

__all__ = [
    "MAX_ANSWER_CHARS",
    "SESSION_NOT_FOUND_CODE",
    "HttpAnswer",
    "answer_of",
    "says_session_lost",
]

MAX_ANSWER_CHARS = 200
"""The first line of a refusal's body is cut to this many characters (it reaches models)."""

SESSION_NOT_FOUND_CODE = -32001
"""The JSON-RPC code the TypeScript and Python SDKs give "Session not found"."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
# Credentials a server might echo back: an Authorization value, a token-like parameter.
_SECRET = re.compile(
    r"((?:bearer|basic)\s+|(?:token|secret|password|api[_-]?key|code)[\"']?\s*[=:]\s*[\"']?)"
    r"[^\s\"'&,;]+",
    re.IGNORECASE,
)
_LOST_WORDS = ("no valid session", "session not found", "session id", "session terminated")


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP refusal (status 400 or more) as our errors show it.

    Attributes:
        status: the HTTP status.
        line: the body's first line (the JSON-RPC error's message if the body is one),
            whitespace collapsed, URLs and credentials redacted, at most ``MAX_ANSWER_CHARS``.
        code: the JSON-RPC error code, if the body is a JSON-RPC error.
    """

    status: int
    line: str
    code: int | None = None

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.line}" if self.line else f"HTTP {self.status}"


def _clean(text: str) -> str:
    text = " ".join(text.split())
    text = _URL.sub(lambda found: redact_url(found.group(0)), text)
    text = _SECRET.sub(lambda found: found.group(1) + "…", text)
    if len(text) > MAX_ANSWER_CHARS:
        text = text[: MAX_ANSWER_CHARS - 1] + "…"
    return text


def answer_of(status: int, body: bytes) -> HttpAnswer:
    """The refusal ``status`` with ``body``, read for our errors."""
    text = body[: 64 * 1024].decode("utf-8", errors="replace")
    code: int | None = None
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        error = parsed["error"]
        if isinstance(error.get("code"), int):
            code = error["code"]
        if isinstance(error.get("message"), str):
            text = error["message"]
    first = next((line for line in text.splitlines() if line.strip()), "")
    return HttpAnswer(status, _clean(first), code)


def says_session_lost(answer: HttpAnswer | None, code: int | None = None) -> bool:
    """Whether a refusal (or a JSON-RPC error ``code``) says the server forgot the session."""
    if code == SESSION_NOT_FOUND_CODE:
        return True
    if answer is None:
        return False
    if answer.code == SESSION_NOT_FOUND_CODE:
        return True
    lowered = answer.line.lower()
    return answer.status in (400, 404) and any(word in lowered for word in _LOST_WORDS)
