"""The wire side of the skills and MCP Apps extensions (internal): ``skills/list`` as a request
the SDK sends (it has no method for it), and a view read with its ``_meta`` kept."""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

import mcp_types as types
from pydantic import ConfigDict

from glove_mcp.extensions.apps import APP_MIME_TYPE, MAX_VIEW_CHARS, McpAppView, csp_from_wire

__all__ = ["ListSkillsRequest", "ListSkillsResult", "view_from_read"]


class ListSkillsParams(types.PaginatedRequestParams):
    """``skills/list``'s parameters (a cursor)."""


class ListSkillsRequest(types.Request[ListSkillsParams, Literal["skills/list"]]):
    """``skills/list``."""

    method: Literal["skills/list"] = "skills/list"
    params: ListSkillsParams


class ListSkillsResult(types.PaginatedResult):
    """``skills/list``'s answer: entries are checked one by one (``skill_from_wire``), so one
    malformed entry costs that skill, not the list."""

    model_config = ConfigDict(extra="allow")
    skills: list[Any]


def view_from_read(uri: str, result: types.ReadResourceResult) -> McpAppView | str:
    """The view in a ``resources/read`` answer, or why there is none (a sentence)."""
    for contents in result.contents:
        if contents.uri != uri:
            continue
        mime = (contents.mime_type or "").replace(" ", "").lower()
        if mime != APP_MIME_TYPE:
            return f"the view {uri!r} is {contents.mime_type or 'of no type'}, not {APP_MIME_TYPE}"
        if isinstance(contents, types.TextResourceContents):
            html = contents.text
        else:
            try:
                html = base64.b64decode(contents.blob, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return f"the view {uri!r} is not valid base64 of UTF-8 text"
        if len(html) > MAX_VIEW_CHARS:
            return f"the view {uri!r} has {len(html):,} characters (at most {MAX_VIEW_CHARS:,})"
        meta = contents.meta
        ui = meta.get("ui") if isinstance(meta, dict) else None
        border = ui.get("prefersBorder") if isinstance(ui, dict) else None
        return McpAppView(
            uri=uri,
            html=html,
            csp=csp_from_wire(meta),
            prefers_border=border if isinstance(border, bool) else None,
        )
    return f"reading {uri!r} returned no contents for that URI"
