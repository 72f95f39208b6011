"""Which of a tool result's two forms the model reads: its ``structured_content`` or its text.

The rule (``for_model``):

1. Structured content is preferred: it is the tool's declared answer, and servers that follow
   the specification repeat it as JSON in a text block anyway.
2. The text is read instead when the result has text and the structured part is **mostly
   binary** (at least half of its JSON is in base64-like strings), or **much larger than the
   text** (over the result budget, ``max_result_chars``, and over ten times the text's
   length), so that what the model would get is a cut-off block of data rather than the
   server's own summary. A note after the text says what was left out and how big it was.
3. Base64 the model cannot use never reaches it: wherever structured content is read, every
   base64-like string (``BASE64_MIN_CHARS`` characters or more of the base64 alphabet, no
   spaces, with digits, capitals and small letters) is replaced by a placeholder giving its size.

A PDF server's ``read_pdf_bytes``, say, answers with a short text and a structured result
holding the file's bytes in base64: the model reads the text, not 100,000 characters of
base64.
"""

from __future__ import annotations

import re
from typing import Any

from glove_core.result_limits import data_text

__all__ = ["BASE64_MIN_CHARS", "for_model"]

BASE64_MIN_CHARS = 256
"""A string of the base64 alphabet (standard or URL-safe, with padding) at least this long is
taken for binary data: identifiers, hashes and tokens are shorter, or contain dots."""

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_MUCH_LARGER = 10


def _is_base64(value: str) -> bool:
    # Random bytes in base64 mix digits, capitals and small letters within a few characters;
    # a long run of one letter, or a word, does not.
    return (
        len(value) >= BASE64_MIN_CHARS
        and _BASE64.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
    )


def _binary_chars(data: Any) -> int:
    """Characters of ``data``'s strings that are base64-like (keys included)."""
    if isinstance(data, str):
        return len(data) if _is_base64(data) else 0
    if isinstance(data, dict):
        return sum(_binary_chars(k) + _binary_chars(v) for k, v in data.items())
    if isinstance(data, list | tuple):
        return sum(_binary_chars(item) for item in data)
    return 0


def _without_binary(data: Any) -> Any:
    """``data`` with each base64-like string replaced by a placeholder."""
    if isinstance(data, str):
        if _is_base64(data):
            return f"[binary data: {len(data):,} characters of base64, not shown]"
        return data
    if isinstance(data, dict):
        return {k: _without_binary(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_without_binary(item) for item in data]
    return data


def for_model(structured: Any, text: str, max_chars: int) -> tuple[Any, bool]:
    """What the model reads of a result with ``structured`` content and ``text`` (its text
    blocks joined), by the module's rule.

    Returns:
        (data, True) when the text is read, with a note on what was left out; else
        (the structured content without its binary strings, False).
    """
    size = len(data_text(structured))
    binary = _binary_chars(structured)
    if text:
        mostly_binary = binary * 2 >= size
        much_larger = size > max_chars and size > _MUCH_LARGER * len(text)
        if mostly_binary or much_larger:
            why = "mostly binary data" if mostly_binary else "much larger than the text"
            note = (
                f"[the tool's structured result ({size:,} characters of JSON, {why}) is not shown]"
            )
            return f"{text}\n{note}", True
    return (_without_binary(structured) if binary else structured), False
