"""A view read from ``resources/read``: the right type, a size bound, its CSP kept."""

from __future__ import annotations

import base64

import mcp_types as types

from glove_mcp.connect._skills_apps import view_from_read
from glove_mcp.extensions.apps import MAX_VIEW_CHARS

URI = "ui://counter/view.html"
MIME = "text/html;profile=mcp-app"


def read(
    *contents: types.TextResourceContents | types.BlobResourceContents,
) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=list(contents))


def test_a_view_is_read_with_its_declared_csp() -> None:
    meta = {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}}
    view = view_from_read(
        URI, read(types.TextResourceContents(uri=URI, mime_type=MIME, text="<p>hi</p>", _meta=meta))
    )
    assert not isinstance(view, str)
    assert view.html == "<p>hi</p>" and view.prefers_border is True
    assert view.csp == {"connectDomains": ("https://api.example.com",)}
    blob = base64.b64encode(b"<p>blob</p>").decode()
    from_blob = view_from_read(
        URI,
        read(
            types.BlobResourceContents(uri=URI, mime_type="text/html; profile=mcp-app", blob=blob)
        ),
    )
    assert not isinstance(from_blob, str) and from_blob.html == "<p>blob</p>"


def test_what_is_no_view_says_why() -> None:
    wrong_type = read(types.TextResourceContents(uri=URI, mime_type="text/html", text="<p>"))
    assert "not text/html;profile=mcp-app" in str(view_from_read(URI, wrong_type))
    big = read(types.TextResourceContents(uri=URI, mime_type=MIME, text="x" * (MAX_VIEW_CHARS + 1)))
    assert "at most" in str(view_from_read(URI, big))
    bad_blob = read(types.BlobResourceContents(uri=URI, mime_type=MIME, blob="!!!"))
    assert "not valid base64" in str(view_from_read(URI, bad_blob))
    other = read(types.TextResourceContents(uri="ui://other", mime_type=MIME, text="<p>"))
    assert "no contents for that URI" in str(view_from_read(URI, other))
