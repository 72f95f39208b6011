"""MCP Apps on the chat page (internal): the frame a view runs in, and a view's tool calls.

A tool result whose ``render_data`` holds a view (``glove_mcp.extensions.apps.APP_KEY``) is
shown by the page in an ``<iframe sandbox="allow-scripts">`` (no ``allow-same-origin``: the view
runs in an opaque origin, so it can read neither the page nor its ``sessionStorage``, where the
key is) whose ``src`` is ``FRAME_PATH``. That document is a small loader under a policy built
from the origins the view declared and nothing wider (``frame_policy``): no ``'self'`` (the view
cannot reach this server's API), ``sandbox allow-scripts`` again in the header (opening the URL
on its own gives the same sandbox). The loader waits for the page to post the view's HTML and
writes it into itself, under that policy. A ``srcdoc`` or ``blob:`` frame would inherit the
page's own policy, which allows no inline script: views could not run.

A view talks to the page over the extension's postMessage JSON-RPC; its ``tools/call`` reaches
``POST /sessions/{id}/app-calls`` (``AppCalls``), which runs the tool with ``Glove.run_tool``:
the person answers a ``permission_request`` slot first, on the page, like for any tool the model
calls. The server knows no MCP: it reads plain data."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from glove_mcp.extensions.apps import declared_origins
from glove_mcp.server._request_body import read_json
from glove_mcp.server._session_access import SessionAccess, check_id
from glove_mcp.server.principals import Principal

__all__ = ["FRAME_PATH", "AppCalls", "frame", "frame_policy"]

FRAME_PATH = "/web/app-frame"
"""The view loader's path; the query names the declared origins (``c``, ``r``, ``f``, ``b``:
connect, resource, frame and base-URI origins, comma-separated)."""

_QUERY = {
    "c": "connectDomains",
    "r": "resourceDomains",
    "f": "frameDomains",
    "b": "baseUriDomains",
}
_MAX_QUERY = 4000
_MAX_TOOL_NAME = 200

_LOADER = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>view</title></head><body><script>
"use strict";
addEventListener("message", function load(event) {
  const data = event.data;
  if (event.source !== parent || !data || data.glove !== "view") return;
  if (typeof data.html !== "string") return;
  removeEventListener("message", load);
  document.open();
  document.write(data.html);
  document.close();
});
parent.postMessage({ glove: "frame-ready" }, "*");
</script></body></html>
"""


def frame_policy(declared: dict[str, list[str]]) -> str:
    """The Content-Security-Policy of a view's frame: the extension's restrictive default,
    without ``'self'``, widened only by the well-formed origins ``declared``."""
    resource = " ".join(declared_origins(declared, "resourceDomains"))
    connect = " ".join(declared_origins(declared, "connectDomains")) or "'none'"
    frames = " ".join(declared_origins(declared, "frameDomains")) or "'none'"
    base = " ".join(declared_origins(declared, "baseUriDomains")) or "'none'"
    extra = f" {resource}" if resource else ""
    return (
        "default-src 'none'; "
        f"script-src 'unsafe-inline'{extra}; "
        f"style-src 'unsafe-inline'{extra}; "
        f"img-src data:{extra}; "
        f"media-src data:{extra}; "
        f"font-src {resource or chr(39) + 'none' + chr(39)}; "
        f"connect-src {connect}; "
        f"frame-src {frames}; "
        "object-src 'none'; "
        f"base-uri {base}; "
        "form-action 'none'; "
        "frame-ancestors 'self'; "
        "sandbox allow-scripts"
    )


async def frame(request: Request) -> Response:
    """``GET /web/app-frame``: the loader, under the policy its query declares (no
    credential: it holds nothing, and runs nothing until the page posts a view to it)."""
    if len(str(request.url.query)) > _MAX_QUERY:
        raise HTTPException(414, "the declared origins are too long")
    declared = {
        key: [o for o in request.query_params.get(short, "").split(",") if o]
        for short, key in _QUERY.items()
    }
    headers = {
        "Content-Security-Policy": frame_policy(declared),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(_LOADER, media_type="text/html; charset=utf-8", headers=headers)


class AppCalls:
    """``POST /sessions/{id}/app-calls``: a view's tool call, through the permission slot.

    Body: ``{"tool": bridged name, "arguments": {...}, "server": id}``; the answer is the
    tool's result (``status``, ``data``, ``message``, ``render_data``).
    """

    def __init__(self, access: SessionAccess, *, max_body_bytes: int, body_timeout: float):
        self._access = access
        self._max_body = max_body_bytes
        self._body_timeout = body_timeout

    async def call(self, request: Request) -> Response:
        """Run the tool once the person allowed it (or a remembered answer did)."""
        session_id = check_id(request.path_params["id"])
        body = await read_json(request, max_bytes=self._max_body, body_timeout=self._body_timeout)
        tool, arguments, server = body.get("tool"), body.get("arguments", {}), body.get("server")
        if not isinstance(tool, str) or not 0 < len(tool) <= _MAX_TOOL_NAME:
            raise HTTPException(400, "'tool' must be a tool's name")
        if not isinstance(arguments, dict):
            raise HTTPException(400, "'arguments' must be an object")
        if not isinstance(server, str) or not 0 < len(server) <= _MAX_TOOL_NAME:
            raise HTTPException(400, "'server' must name the view's server")
        principal: Principal = request.state.principal
        async with self._access.use(session_id, principal) as session:
            result = await session.glove.run_tool(
                tool, arguments, requested_by=f"the view of {server}"
            )
        answer: dict[str, Any] = result.model_dump(
            mode="json", include={"status", "data", "message", "render_data"}
        )
        return JSONResponse(answer)
