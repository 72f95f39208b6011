"""A logging filter for the command's own handler: URLs in any record (the SDK's and httpx's
debug lines name the server URL verbatim) lose their user-info and query, as
``glove_core.redaction.redact_url`` decides for glove's own messages."""

from __future__ import annotations

import logging
import re

__all__ = ["RedactingFilter", "redact_handlers", "redact_urls_in"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def redact_urls_in(text: str) -> str:
    """``text`` with every URL in it redacted."""
    if "://" not in text:
        return text
    # Imported at the first URL, not with the command: importing glove_core before chat's
    # prompt would delay it (the filter is installed before the prompt shows).
    from glove_core.redaction import redact_url

    return _URL.sub(lambda found: redact_url(found.group(0)), text)


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with its URLs redacted (the record is formatted once
    here, so its arguments are dropped)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact_urls_in(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def redact_handlers() -> None:
    """Put a ``RedactingFilter`` on each handler of the root logger (the command's own)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
