"""Resources and prompts over one connection: the bodies of the ``McpServerConnection``
methods of the same names (``list_resources``, ``list_resource_templates``, ``read_resource``,
``list_prompts``, ``get_prompt``), kept here so ``connect.py`` stays one concept.

Each function takes the connection's request runner (``McpServerConnection._request``, handed
over by the connection itself), so every request gets the connection's recovery, timeouts and
401 handling. The capability check runs inside the request, on the session that will carry it:
a reconnect may reach a server that declares something else than the last session's did.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, Literal, Protocol, TypeVar

import mcp_types as types
from mcp.client.session import ClientSession

from glove_mcp.connect._convert import (
    prompt_from_sdk,
    prompt_result_from_sdk,
    read_result_from_sdk,
    resource_from_sdk,
    resource_template_from_sdk,
)
from glove_mcp.errors import GloveMcpError, McpCapabilityError, McpProtocolError
from glove_mcp.types import (
    McpPrompt,
    McpPromptResult,
    McpReadResult,
    McpResource,
    McpResourceTemplate,
)

__all__ = [
    "Requester",
    "declares",
    "get_prompt",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "paginate",
    "read_resource",
]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_Page = TypeVar("_Page", bound=types.PaginatedResult)

_MAX_PAGES = 1000

Capability = Literal["resources", "prompts"]


class Requester(Protocol):
    """``McpServerConnection._request``: runs ``op`` on the live session, with recovery."""

    def __call__(
        self, what: str, op: Callable[[ClientSession], Coroutine[Any, Any, _T]], /
    ) -> Coroutine[Any, Any, _T]: ...


def declares(session: ClientSession | None, capability: str) -> bool:
    """Whether the server declared ``capability`` on ``session`` (False without one)."""
    caps = session.server_capabilities if session is not None else None
    return caps is not None and getattr(caps, capability, None) is not None


def _require(session: ClientSession, namespace: str, capability: Capability) -> None:
    if not declares(session, capability):
        raise McpCapabilityError(namespace, capability)


async def paginate(
    request: Requester,
    namespace: str,
    what: str,
    capability: Capability | None,
    fetch: Callable[
        [ClientSession, types.PaginatedRequestParams | None], Coroutine[Any, Any, _Page]
    ],
    more: Callable[[_Page], bool] | None = None,
) -> list[_Page]:
    """Every page of a paginated list (``tools/list`` and the resource and prompt lists), with a
    page cap (1000 pages, then a warning and what was read) and a repeated-cursor check: a
    server that loops its cursors gets an error, not an endless loop. ``capability`` (when
    given) must be declared by the server. ``more(page)``, when given, sees each page as it
    comes; False stops reading (a caller that has enough does not read an endless list)."""
    pages: list[_Page] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(_MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None

        async def page(s: ClientSession, p: types.PaginatedRequestParams | None = params) -> _Page:
            if capability is not None:
                _require(s, namespace, capability)
            return await fetch(s, p)

        result = await request(what, page)
        pages.append(result)
        wanted = more(result) if more is not None else True
        cursor = result.next_cursor
        if not cursor or not wanted:
            break
        if cursor in seen:
            raise McpProtocolError(
                namespace,
                what,
                types.INVALID_REQUEST,
                f"the server repeated the pagination cursor {cursor!r}",
            )
        seen.add(cursor)
    else:
        logger.warning(
            "MCP server %r: %s still had more after %d pages; using what was read",
            namespace,
            what,
            _MAX_PAGES,
        )
    return pages


async def list_resources(request: Requester, namespace: str) -> list[McpResource]:
    """``resources/list``, every page."""

    async def fetch(
        s: ClientSession, p: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return await s.list_resources(params=p)

    pages = await paginate(request, namespace, "resources/list", "resources", fetch)
    return [resource_from_sdk(r) for page in pages for r in page.resources]


async def list_resource_templates(request: Requester, namespace: str) -> list[McpResourceTemplate]:
    """``resources/templates/list``, every page."""

    async def fetch(
        s: ClientSession, p: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return await s.list_resource_templates(params=p)

    pages = await paginate(request, namespace, "resources/templates/list", "resources", fetch)
    return [resource_template_from_sdk(t) for page in pages for t in page.resource_templates]


async def read_resource(request: Requester, namespace: str, uri: str) -> McpReadResult:
    """``resources/read`` of ``uri``."""

    async def op(s: ClientSession) -> types.ReadResourceResult:
        _require(s, namespace, "resources")
        return await s.read_resource(uri)

    return read_result_from_sdk(await request(f"resources/read {uri!r}", op))


async def list_prompts(request: Requester, namespace: str) -> list[McpPrompt]:
    """``prompts/list``, every page."""

    async def fetch(
        s: ClientSession, p: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return await s.list_prompts(params=p)

    pages = await paginate(request, namespace, "prompts/list", "prompts", fetch)
    return [prompt_from_sdk(p) for page in pages for p in page.prompts]


async def get_prompt(
    request: Requester, namespace: str, name: str, arguments: dict[str, str] | None
) -> McpPromptResult:
    """``prompts/get`` of ``name`` with ``arguments``."""
    if arguments is not None:
        wrong = sorted(repr(k) for k, v in arguments.items() if not isinstance(v, str))
        if wrong:
            # The protocol carries prompt arguments as strings only; say so before the server
            # answers with a schema error that names none of them.
            raise TypeError(
                f"prompt {name!r} of MCP server {namespace!r}: argument values must be strings; "
                f"not strings: {', '.join(wrong)}"
            )

    async def op(s: ClientSession) -> types.GetPromptResult:
        _require(s, namespace, "prompts")
        return await s.get_prompt(name, arguments)

    what = f"prompts/get {name!r}"
    try:
        return prompt_result_from_sdk(await request(what, op))
    except McpProtocolError as exc:
        # Servers word these refusals poorly (the SDK's own server answers a missing argument
        # with "Internal server error" on the stateless protocol), so look at the listing and
        # say what was wrong. Only on failure: a good request costs no extra round trip.
        hint = await _prompt_hint(request, namespace, name, arguments or {})
        if hint is None:
            raise
        raise McpProtocolError(namespace, what, exc.code, f"{exc.detail}. {hint}") from exc


async def _prompt_hint(
    request: Requester, namespace: str, name: str, arguments: dict[str, str]
) -> str | None:
    try:
        prompts = {p.name: p for p in await list_prompts(request, namespace)}
    except GloveMcpError:
        return None
    prompt = prompts.get(name)
    if prompt is None:
        offered = ", ".join(repr(n) for n in prompts) or "none"
        return f"It offers no prompt {name!r} (prompts: {offered})"
    takes = {a.name: a for a in prompt.arguments}
    missing = [repr(a) for a, arg in takes.items() if arg.required and a not in arguments]
    unknown = [repr(a) for a in arguments if a not in takes]
    problems = []
    if missing:
        problems.append(f"missing required argument(s) {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown argument(s) {', '.join(unknown)}")
    if not problems:
        return None
    signature = ", ".join(a + ("" if arg.required else "?") for a, arg in takes.items())
    return f"Prompt {name!r} ({signature or 'no arguments'}): {'; '.join(problems)}"
