"""Server-supplied text as a person may see it, on the terminal and on the web page: without
control characters (newlines and tabs stay) and without format characters (Unicode category
Cf: the bidirectional overrides and isolates such as U+202E, zero-width characters), which let
a server make the text a person reads differ from the text that is there — a host shown as
``google.com`` that is ``moc.elgoog`` reversed. One helper decides it for both places.

``page_url`` is the rule for URL-mode elicitation: only ``http`` and ``https`` pages are
shown or opened, and the parsed host is shown on its own.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

__all__ = ["clean_text", "page_url"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: Any) -> str:
    """``text`` (made a string) without control characters other than newline and tab, and
    without format characters (Unicode category Cf)."""
    value = _CONTROL.sub("", str(text))
    if value.isascii():
        return value
    return "".join(ch for ch in value if unicodedata.category(ch) != "Cf")


def page_url(url: str) -> tuple[str, str]:
    """The URL a person may be shown and asked to open, and its host.

    Returns:
        ``(url, host)``: the URL without control and format characters, and the host it
        really names.

    Raises:
        ValueError: the URL is not an ``http``/``https`` URL with a host; the message says why.
    """
    cleaned = clean_text(url).strip()
    try:
        parts = urlsplit(cleaned)
        host = parts.hostname or ""
    except ValueError:
        raise ValueError("it is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        scheme = clean_text(parts.scheme)[:20] or "no scheme"
        raise ValueError(f"only http and https pages are opened, not {scheme}:")
    if not host:
        raise ValueError("the URL names no host")
    return cleaned, host
