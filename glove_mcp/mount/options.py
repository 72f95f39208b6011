"""What ``mount_mcp`` was told, and what follows from it for each server: how the server's
requests are answered (sampling, elicitation, roots) and what the model reads of the servers'
instructions.

Sampling is off unless the application allows it, per server (``McpCatalogueEntry.
allow_sampling``) or for the mount (``allow_sampling=True`` or a collection of ids); the entry
wins. A server that may not sample is not told the client can, and one that asks anyway gets
the SDK's refusal. An allowed request goes to ``sampling_model``, or the Glove's own model at
the time of the request, as a separate request capped at ``sampling_max_tokens``; with
``approve_sampling`` (and a person present: not in server mode) a person approves each one.

A server's ``call_timeout`` is its entry's when set, else the mount's; its listing is bounded
by the mount's ``listing_limits`` (``glove_mcp.mount.listing``).
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal

import httpx2
import mcp_types as types

from glove_core import Glove, ModelAdapter, Tool
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.connect import ClientInfo, McpClientPool, McpServerConnection, ToolFilter
from glove_mcp.connect.elicitation import OnElicitation, answer_elicitation
from glove_mcp.connect.http import DEFAULT_MAX_MESSAGE_BYTES
from glove_mcp.connect.mcp_server_requests import ChangeKind, RootsOption, ServerRequests
from glove_mcp.connect.sampling import DEFAULT_SAMPLING_MAX_TOKENS, SamplingAnswer, answer_sampling
from glove_mcp.connect.tasks import TaskPolicy
from glove_mcp.mount._results import DEFAULT_MAX_RESULT_CHARS, check_max_result_chars
from glove_mcp.mount.listing import DEFAULT_LISTING_LIMITS, ListingLimits
from glove_mcp.subscribers import McpEvent

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_SAMPLING_MAX_TOKENS",
    "INSTRUCTIONS_KEY",
    "MAX_INSTRUCTIONS_CHARS",
    "AmbiguityPolicy",
    "MountOptions",
    "MountState",
    "OnElicitation",
    "WrapTool",
    "check_allow_sampling",
    "instructions_text",
    "may_sample",
    "server_connection",
    "server_requests",
    "unique_entries",
]

AmbiguityPolicy = Literal["interactive", "auto-pick-best", "defer-to-main"]
"""How discovery picks among several matching servers."""

WrapTool = Callable[[Tool, McpCatalogueEntry], Tool]
"""``wrap_tool(tool, entry) -> Tool``: adjust each bridged tool before it is offered."""

INSTRUCTIONS_KEY = "mcp_server_instructions"
"""The history-context key under which the loaded servers' instructions reach the model."""

MAX_INSTRUCTIONS_CHARS = 4000
"""A server's instructions longer than this are cut."""

DEFAULT_CALL_TIMEOUT = 300.0
"""Seconds one request to a mounted server (a tool call, a listing) may take by default."""


class MountState(Enum):
    """Where a mount is in its life."""

    OPEN = "open"
    CLOSED = "closed"


@dataclass(frozen=True, kw_only=True)
class MountOptions:
    """How a mount connects, discovers and answers servers (the options of ``mount_mcp``,
    documented there)."""

    ambiguity_policy: AmbiguityPolicy | None = None
    subagent_model: ModelAdapter | None = None
    subagent_system_prompt: str | None = None
    client_info: ClientInfo | None = None
    filter_tools: ToolFilter | None = None
    wrap_tool: WrapTool | None = None
    pool: McpClientPool | None = None
    sampling_model: ModelAdapter | None = None
    allow_sampling: bool | Collection[str] = False
    approve_sampling: bool = False
    sampling_max_tokens: int = DEFAULT_SAMPLING_MAX_TOKENS
    roots: RootsOption | None = None
    log_level: types.LoggingLevel | None = None
    on_elicitation: OnElicitation | None = None
    tasks: TaskPolicy = "never"
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    listing_limits: ListingLimits = DEFAULT_LISTING_LIMITS
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    mark_untrusted: bool = True
    apps: bool = False

    def __post_init__(self) -> None:
        check_max_result_chars(self.max_result_chars)


def unique_entries(entries: Sequence[McpCatalogueEntry]) -> dict[str, McpCatalogueEntry]:
    """The catalogue by id.

    Raises:
        ValueError: an id appears twice.
    """
    by_id = {entry.id: entry for entry in entries}
    if len(by_id) != len(entries):
        dupes = sorted({e.id for e in entries if sum(x.id == e.id for x in entries) > 1})
        raise ValueError(f"catalogue ids must be unique; repeated: {', '.join(dupes)}")
    return by_id


def server_connection(
    entry: McpCatalogueEntry,
    options: MountOptions,
    *,
    auth: httpx2.Auth,
    pool: McpClientPool,
    requests: ServerRequests,
) -> McpServerConnection:
    """The (not yet connected) connection a mount opens to server ``entry``: the entry's
    transport, protocol, exclusions and ``call_timeout`` (else the mount's)."""
    timeout = entry.call_timeout if entry.call_timeout is not None else options.call_timeout
    return McpServerConnection(
        entry.id,
        entry.url,
        command=entry.command or None,
        env=entry.env or None,
        auth=auth,
        client_info=options.client_info,
        exclude_tools=entry.exclude_tools,
        filter_tools=options.filter_tools,
        pool=pool,
        call_timeout=timeout,
        protocol=entry.protocol,
        requests=requests,
        tasks=options.tasks,
        max_message_bytes=options.max_message_bytes,
        apps=options.apps,
    )


def check_allow_sampling(
    allow: bool | Collection[str], entries: Collection[McpCatalogueEntry]
) -> None:
    """Refuse an ``allow_sampling`` that cannot mean what its caller meant.

    Raises:
        TypeError: a single string (say ``allow_sampling=["notes"]``, not ``"notes"``).
        ValueError: ids that are not in the catalogue.
    """
    if isinstance(allow, bool):
        return
    if isinstance(allow, str):
        raise TypeError(
            f"allow_sampling takes True, False or a collection of catalogue ids; "
            f"for one server write allow_sampling=[{allow!r}]"
        )
    known = {e.id for e in entries}
    unknown = sorted(set(allow) - known)
    if unknown:
        raise ValueError(
            f"allow_sampling names servers that are not in the catalogue: {', '.join(unknown)}"
        )


def may_sample(entry: McpCatalogueEntry, allow: bool | Collection[str]) -> bool:
    """Whether server ``entry`` may ask for completions: its own ``allow_sampling`` when set,
    else the mount's."""
    if entry.allow_sampling is not None:
        return entry.allow_sampling
    return allow if isinstance(allow, bool) else entry.id in allow


def server_requests(
    entry: McpCatalogueEntry,
    options: MountOptions,
    glove: Glove,
    *,
    roots: RootsOption | None,
    publish: Callable[[McpEvent], Awaitable[None]],
    on_list_changed: Callable[[ChangeKind], Awaitable[None]],
) -> ServerRequests:
    """How a mount answers server ``entry``: its log messages and list changes reach the
    Glove's subscribers (``publish``), and the options decide sampling and roots. Elicitation
    is declared only where something can answer it: an ``on_elicitation`` handler, or a person
    (the Glove is not in server mode)."""
    sampling = None
    if may_sample(entry, options.allow_sampling):
        server = entry.id

        async def sampling(
            params: types.CreateMessageRequestParams,
        ) -> SamplingAnswer:
            person = options.approve_sampling and not glove.server_mode
            return await answer_sampling(
                server,
                params,
                model=options.sampling_model or glove.model,
                max_tokens=options.sampling_max_tokens,
                approve=glove.display_manager if person else None,
                publish=publish,
            )

    elicitation = None
    # Declared only when something can answer: a handler, or a person (not in server mode).
    # Declared without one, it makes servers offer tools whose every call is declined.
    if options.on_elicitation is not None or not glove.server_mode:

        async def elicitation(
            params: types.ElicitRequestParams,
        ) -> types.ElicitResult | types.ErrorData:
            return await answer_elicitation(
                entry.id,
                params,
                on_elicitation=options.on_elicitation,
                display=glove.display_manager,
                server_mode=glove.server_mode,
            )

    return ServerRequests(
        sampling=sampling,
        elicitation=elicitation,
        roots=roots,
        log_level=options.log_level,
        on_log=publish,
        on_list_changed=on_list_changed,
    )


def instructions_text(
    connections: Mapping[str, McpServerConnection], notes: Mapping[str, str] | None = None
) -> str | None:
    """What the servers say about using them (their ``instructions``), one block per server,
    then what the listing limits left out of their tools (``notes``, by id), or None when
    there is nothing to say."""
    parts = []
    for id, connection in connections.items():
        text = (connection.instructions or "").strip()
        if text:
            if len(text) > MAX_INSTRUCTIONS_CHARS:
                text = text[:MAX_INSTRUCTIONS_CHARS] + "… [cut]"
            # Escaped inside its own envelope: the whole block is escaped once more as history
            # context, so a server's "</server><server id=…>" stays doubly escaped and never
            # reads like the envelope of another server.
            text = html.escape(text, quote=False)
            parts.append(f'<server id="{html.escape(id)}">\n{text}\n</server>')
    limited = [f"- {note}" for id, note in (notes or {}).items() if id in connections]
    if not parts and not limited:
        return None
    sections = []
    if parts:
        sections.append(
            "Instructions from the MCP servers whose tools you have:\n" + "\n".join(parts)
        )
    if limited:
        sections.append(
            "Some MCP servers list more than this agent offers; what was left out:\n"
            + "\n".join(limited)
        )
    return "\n\n".join(sections)
