"""Escaping for the XML-like envelopes the framework writes around outside content (events,
untrusted tool output), so nothing inside an envelope can close it or forge another."""

from __future__ import annotations

import html
import re

__all__ = ["xml_attr", "xml_text"]

# Characters XML 1.0 cannot carry at all; escaping does not help, so they are replaced.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(value: str) -> str:
    """``value`` as element text."""
    # A raw CR would be normalised away by an XML reader; a character reference keeps it.
    return html.escape(_XML_INVALID.sub("\ufffd", value), quote=False).replace("\r", "&#13;")


def xml_attr(value: str) -> str:
    """``value`` as a double-quoted attribute value."""
    # Attribute values have their whitespace normalised unless it is written as references.
    escaped = html.escape(_XML_INVALID.sub("\ufffd", value), quote=True)
    return escaped.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
