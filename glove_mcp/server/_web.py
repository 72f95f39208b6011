"""The chat page of ``glove-mcp serve --web``: static files with a strict policy (internal).

``GET /`` is ``web/index.html``; ``/web/app.js`` and ``/web/app.css`` are its script and
style, ``/favicon.ico`` its icon. They are package data, read once when the server is built:
plain HTML and JavaScript, nothing built, nothing fetched from elsewhere. The page needs no
key to load (it holds no data); it asks for the API key, keeps it in ``sessionStorage`` and
sends it as ``Authorization: Bearer`` on every call to the API, never in a URL.

Every response carries a Content-Security-Policy that allows only this origin's script,
style and connections (no inline script, no eval, no frames, no forms posted elsewhere), and
the page writes untrusted text (model replies, tool results) as text nodes only.
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["CONTENT_SECURITY_POLICY", "web_routes"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; frame-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""The page's policy: only this origin's files and API, and frames of this origin (the
sandboxed loader of MCP Apps views, ``_app_views``)."""

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}

_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/web/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/web/app.css": ("app.css", "text/css; charset=utf-8"),
    # Browsers ask for it on their own: answered, so no 404 in the log or the console.
    "/favicon.ico": ("favicon.ico", "image/x-icon"),
}


def web_routes() -> list[Route]:
    """The page's routes (the files are read now, once)."""
    folder = resources.files("glove_mcp.server").joinpath("web")
    routes = []
    for path, (name, media_type) in _FILES.items():
        body = folder.joinpath(name).read_bytes()

        async def serve(
            request: Request, body: bytes = body, media_type: str = media_type
        ) -> Response:
            return Response(body, media_type=media_type, headers=_HEADERS)

        routes.append(Route(path, serve, methods=["GET"]))
    return routes
