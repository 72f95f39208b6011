"""mount_mcp: the servers of a conversation become tools of a Glove.

A mount is a tool source of its Glove: the loop asks it for the bridged tools before every
model call. ``mount_mcp`` reloads the adapter's active servers in parallel and fails open (a
server that cannot be reached is logged and reported as ``McpServerFailed``). ``activate`` and
``deactivate`` change one server while the agent runs, all or nothing. Tools that join
mid-conversation stay out of the cached prompt prefix (``JoiningToolSource``); each server's
listed tools are kept with the adapter when it can (``_learning``), for discovery.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import Literal

from mcp_types import LoggingLevel

from glove_core import Glove, ModelAdapter, Tool
from glove_core.errors import ToolNameConflictError
from glove_core.resources import AsyncResource
from glove_core.tracing import internal_span
from glove_mcp import types as own
from glove_mcp.adapter import McpAdapter
from glove_mcp.auth import adapter_auth
from glove_mcp.catalogue import McpCatalogueEntry, check_call_timeout
from glove_mcp.connect import ClientInfo, McpClientPool, McpServerConnection, ToolFilter
from glove_mcp.connect.mcp_server_requests import ChangeKind, RootsOption, ServerRequests
from glove_mcp.connect.tasks import TaskPolicy
from glove_mcp.discovery import DEFAULT_CATALOGUE_BUDGET, CatalogueRanker, discovery_tool
from glove_mcp.errors import (
    GloveMcpError,
    McpActivationError,
    McpServerNotLoadedError,
    McpStateError,
    McpUnknownServerError,
)
from glove_mcp.extensions.skills import McpSkill
from glove_mcp.mount._coalesce import Coalescer
from glove_mcp.mount._held_tools import HeldTools, held_tools_finder
from glove_mcp.mount._learning import remember_tools
from glove_mcp.mount._mcp_server_tools import LoadedServer, bridge_server, relisted
from glove_mcp.mount.listing import DEFAULT_LISTING_LIMITS, ListingLimits
from glove_mcp.mount.options import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_SAMPLING_MAX_TOKENS,
    INSTRUCTIONS_KEY,
    AmbiguityPolicy,
    MountOptions,
    MountState,
    OnElicitation,
    WrapTool,
    check_allow_sampling,
    instructions_text,
    server_connection,
    server_requests,
    unique_entries,
)
from glove_mcp.mount.skills import SKILLS_KEY, SkillsInUse
from glove_mcp.subscribers import (
    McpEvent,
    McpListChanged,
    McpServerActivated,
    McpServerDeactivated,
    McpServerFailed,
)

__all__ = [
    "DEFAULT_LISTING_LIMITS",
    "AmbiguityPolicy",
    "ListingLimits",
    "McpMount",
    "McpServerActivated",
    "McpServerDeactivated",
    "McpServerFailed",
    "MountState",
    "WrapTool",
    "mount_mcp",
]

logger = logging.getLogger(__name__)


class McpMount(AsyncResource):
    """The MCP servers mounted on one Glove, and a tool source of it. Create it with
    ``mount_mcp``.

    Closing it (``aclose()`` or ``async with``) closes every connection and the shared HTTP
    client it created; the tools stay offered but fail with an error result.

    Attributes:
        glove: the agent whose tool source this mount is.
        adapter: the conversation's adapter.
        entries: the catalogue, by id.
        ambiguity_policy, subagent_model, subagent_system_prompt: of the discovery subagent.
    """

    def __init__(
        self,
        glove: Glove,
        adapter: McpAdapter,
        entries: Sequence[McpCatalogueEntry],
        options: MountOptions,
    ) -> None:
        # Made by mount_mcp, which documents each option once; this only keeps them.
        self.glove = glove
        self.adapter = adapter
        self.entries = unique_entries(entries)
        self.ambiguity_policy: AmbiguityPolicy = options.ambiguity_policy or (
            "auto-pick-best" if glove.server_mode else "interactive"
        )
        self.subagent_model = options.subagent_model
        self.subagent_system_prompt = options.subagent_system_prompt
        self.options = options
        self._roots = list(options.roots) if isinstance(options.roots, Sequence) else []
        self._relists = Coalescer()
        pool = options.pool
        self._own_pool = pool is None
        self.pool = pool if pool is not None else McpClientPool()
        self._loaded: dict[str, LoadedServer] = {}
        # Every bridged tool offered, in the order first loaded: a server switched off keeps
        # its tools here (switched off), so the tool list never shrinks.
        self._tools: dict[str, Tool] = {}
        # Deactivated servers: their tools stay offered but switched off (name -> real name).
        self._dormant: dict[str, dict[str, str]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._joined: set[str] = set()  # tools added mid-conversation (JoiningToolSource)
        self._state = MountState.OPEN
        self._skills = SkillsInUse()
        glove.add_tool_source(self)
        self._remove_instructions = self._history_context(self._instructions, INSTRUCTIONS_KEY)
        self._remove_skills = self._history_context(self._skills_text, SKILLS_KEY)

    def _history_context(self, fn: Callable[[object], str | None], key: str) -> Callable[[], None]:
        try:
            return self.glove.add_context_provider(fn, delivery="history", key=key)
        except ValueError:  # a second mount on the same Glove
            return self.glove.add_context_provider(
                fn, delivery="history", key=f"{key}:{self.adapter.identifier}"
            )

    @property
    def state(self) -> MountState:
        """OPEN or CLOSED."""
        return self._state

    @property
    def loaded(self) -> list[str]:
        """Ids whose tools are loaded (offered and switched on) right now."""
        return list(self._loaded)

    def get_tools(self) -> list[Tool]:
        """The bridged tools offered (``ToolSource``): the loaded servers' and, switched off,
        those of servers deactivated earlier."""
        return list(self._tools.values())

    def joined_tools(self) -> set[str]:
        """Tools added mid-conversation (``activate``, ``list_changed``): ``JoiningToolSource``."""
        return self._joined

    def tool_names(self, id: str) -> dict[str, str]:
        """The loaded tools of server ``id``: bridged name → the server's real tool name."""
        loaded = self._loaded.get(id)
        return dict(loaded.tools) if loaded else {}

    def app_tools(self) -> dict[str, Tool]:
        """The loaded servers' tools for their views alone (``AppToolSource``; MCP Apps,
        ``apps=True``): never offered to the model, run with ``Glove.run_tool``."""
        return {name: t for x in self._loaded.values() for name, t in x.app_tools.items()}

    def skills(self, id: str) -> list[McpSkill]:
        """The skills loaded server ``id`` listed when it loaded ([] when none, or not loaded)."""
        loaded = self._loaded.get(id)
        return list(loaded.skills) if loaded else []

    def _skills_text(self, signal: object = None) -> str | None:
        # History context, like the instructions: saved only when the set of skills changes.
        return self._skills.text()

    def connection(self, id: str) -> McpServerConnection | None:
        """The open connection of server ``id``, if it is loaded."""
        loaded = self._loaded.get(id)
        return loaded.connection if loaded else None

    def _instructions(self, signal: object = None) -> str | None:
        # History context: saved only when it changes, so it never rewrites the cached prefix.
        notes = {id: x.note for id, x in self._loaded.items() if x.note is not None}
        return instructions_text({id: x.connection for id, x in self._loaded.items()}, notes)

    def _check_open(self) -> None:
        if self._state is MountState.CLOSED:
            raise McpStateError("this McpMount is closed; mount again with mount_mcp")

    def _lock(self, id: str) -> asyncio.Lock:
        return self._locks.setdefault(id, asyncio.Lock())

    async def _emit(self, event: McpEvent) -> None:
        await self.glove.publish(event)

    # -- loading ------------------------------------------------------------------------------

    async def _load(self, entry: McpCatalogueEntry) -> LoadedServer:
        """Connect, list, bridge and offer one server's tools; on any failure nothing stays."""
        conn = server_connection(
            entry,
            self.options,
            auth=adapter_auth(self.adapter, entry.id),
            pool=self.pool,
            requests=self._requests_for(entry),
        )
        try:
            await conn.connect()
            made = await bridge_server(
                entry,
                conn,
                self.glove,
                self.options,
                self._emit,
                skills_in_use=self._skills,
                finder=self._finder(entry.id),
            )
            bridged, note = made.tools, made.note
            # Held tools too: discovery finds the server by every tool it has.
            known = [*bridged, *made.held.values()]
            await remember_tools(  # before: no await below
                self.adapter,
                entry.id,
                known,
                instructions=conn.instructions,
                ttl_ms=conn.tools_ttl_ms,
            )
            names = [t.name for t, _ in bridged]
            self._check_open()
            # A server switched off earlier left its tools offered (so the tool list, and the
            # prompt cache, stayed put): the new bridges take their places under the same names.
            dormant = self._dormant.get(entry.id, {})
            taken = {t.name for t in self.glove.tools if t.name not in dormant}
            for name in names:
                if name in taken:
                    raise ToolNameConflictError(name)
            replaced = {n: self._tools[n] for n in names if n in dormant and n in self._tools}
            for tool, _ in bridged:
                self._tools[tool.name] = tool
            return LoadedServer(
                conn,
                {t.name: real for t, real in bridged},
                replaced,
                note,
                made.skills,
                made.app_tools,
                dict(made.held),
            )
        except BaseException:
            await conn.close()
            raise

    def _finder(self, id: str) -> Callable[[str], Tool]:
        """Makes server ``id``'s ``<id>__more_tools`` tool, given its name after the namespace
        (offered only while it holds tools back)."""

        def held() -> HeldTools:
            loaded = self._loaded.get(id)
            return loaded.held if loaded is not None else {}

        def load(names: Sequence[str]) -> list[str]:
            loaded = self._loaded[id]
            added = loaded.load_held(names, self._tools)
            # Joined mid-conversation: deferred where the result references them, so the
            # cached prompt prefix stays put.
            self._joined.update(added)
            return added

        return lambda name: held_tools_finder(id, held, load, name=name)

    def _requests_for(self, entry: McpCatalogueEntry) -> ServerRequests:
        """How server ``entry`` is answered (see ``glove_mcp.mount.options``)."""
        id = entry.id

        async def changed(what: ChangeKind) -> None:
            await self._list_changed(id, what)

        return server_requests(
            entry,
            self.options,
            self.glove,
            roots=self._roots_now if self.options.roots is not None else None,
            publish=self._emit,
            on_list_changed=changed,
        )

    async def _list_changed(self, id: str, what: ChangeKind) -> None:
        """The server said its tools (or prompts, or resources) changed: list them again (at
        most one re-listing in flight and one pending, however many notifications arrive)."""
        if what != "tools":
            await self._emit(McpListChanged(id, what))
            return
        await self._relists.run(id, lambda: self._relist(id))

    async def _relist(self, id: str) -> None:
        """New tools join deferred; changed ones are replaced; removed ones leave."""
        async with self._lock(id):
            loaded = self._loaded.get(id)
            if loaded is None or self._state is MountState.CLOSED:
                return
            try:
                args = (self.entries[id], loaded.connection, self.glove, self.options)
                made = await bridge_server(
                    *args, self._emit, skills_in_use=self._skills, finder=self._finder(id)
                )
            except Exception as exc:
                logger.warning(
                    "MCP server %r changed its tools, but listing them failed: %s", id, exc
                )
                return
            # Held tools loaded earlier stay offered; the others stay held.
            bridged = list(made.tools)
            held = dict(made.held)
            for name in [n for n in held if n in loaded.tools]:
                bridged.append(held.pop(name))
            taken = {t.name for t in self.glove.tools if t.name not in loaded.tools}
            change = relisted(id, self._tools, loaded, bridged, taken)
            self._joined.update(change.added)
            loaded.note = made.note
            loaded.skills, loaded.app_tools = made.skills, made.app_tools
            loaded.held = held
            if differs := bool(change.added or change.removed or change.changed):
                known = [*bridged, *held.values()]
                connection = loaded.connection
                await remember_tools(  # saved only when it differs
                    self.adapter,
                    id,
                    known,
                    instructions=connection.instructions,
                    ttl_ms=connection.tools_ttl_ms,
                )
        if differs:
            await self._emit(McpListChanged(id, "tools", *change.names_changed))

    async def load(self, id: str) -> None:
        """Load catalogue server ``id``, which the adapter already records as active (another
        instance, or an earlier process, activated it), without recording it again. A server
        that fails to load is logged and reported as ``mcp_server_failed``; the mount goes on
        without it, as ``reload`` does. Nothing happens when it is loaded already.

        Raises:
            McpUnknownServerError: ``id`` is not in the catalogue.
            McpStateError: the mount is closed.
        """
        self._check_open()
        entry = self.entries.get(id)
        if entry is None:
            raise McpUnknownServerError(id, list(self.entries))
        async with self._lock(id):
            if id in self._loaded:
                return
            try:
                loaded = self._loaded[id] = await self._load(entry)
            except Exception as exc:
                logger.warning(
                    "MCP server %r failed to reload for %r; continuing without it: %s",
                    id,
                    self.adapter.identifier,
                    exc,
                )
                await self._emit(McpServerFailed(id, "reload", str(exc)))
                return
            if self._dormant.pop(id, None) is not None:
                # Switched off here earlier and back on elsewhere: its tools come back on.
                off = await self.glove.switched_off_tools()
                back_on = [name for name in loaded.tools if name in off]
                if back_on:
                    self.glove.switch_tools(enable=back_on)
        await self._emit(McpServerActivated(id, tuple(loaded.tools)))

    async def reload(self) -> list[str]:
        """Load every active server of the adapter that is in the catalogue, in parallel,
        failing open per server. ``mount_mcp`` calls it.

        Returns:
            The ids loaded after the reload.
        """
        self._check_open()
        active = await self.adapter.get_active()
        unknown = [i for i in active if i not in self.entries]
        if unknown:
            logger.info(
                "ignoring active MCP ids not in the catalogue for %r: %s",
                self.adapter.identifier,
                ", ".join(unknown),
            )
        wanted = [i for i in dict.fromkeys(active) if i in self.entries]
        try:
            async with asyncio.TaskGroup() as group:
                for id in wanted:
                    group.create_task(self.load(id))
        except BaseException:
            # Cancelled (or a bug): leave nothing half-open behind.
            await self.aclose()
            raise
        return self.loaded

    async def activate(self, id: str) -> list[str]:
        """Load server ``id`` now and mark it active in the adapter, all or nothing.

        Returns:
            The bridged tool names now offered for it (unchanged if it was already loaded).

        Raises:
            McpUnknownServerError: ``id`` is not in the catalogue.
            McpActivationError: connecting, listing, a tool name taken by another tool, or the
                adapter failed; no tool stayed offered and the connection is closed.
                ``__cause__`` holds the reason.
            McpStateError: the mount is closed.
        """
        self._check_open()
        entry = self.entries.get(id)
        if entry is None:
            raise McpUnknownServerError(id, list(self.entries))
        # Its connect and tools/list spans are children of this one.
        with internal_span(f"activate {id}", {"glove.mcp.server.id": id}):
            return await self._activate(id, entry)

    async def _activate(self, id: str, entry: McpCatalogueEntry) -> list[str]:
        async with self._lock(id):
            if id in self._loaded:
                return list(self._loaded[id].tools)
            try:
                loaded = await self._load(entry)
            except Exception as exc:
                await self._emit(McpServerFailed(id, "activate", str(exc)))
                if isinstance(exc, McpActivationError):
                    raise
                raise McpActivationError(id, str(exc)) from exc
            try:
                await self.adapter.activate(id)
            except BaseException as exc:
                loaded.take_back(self._tools)
                await loaded.connection.close()
                if not isinstance(exc, Exception):
                    raise
                raise McpActivationError(id, f"the adapter failed to record it: {exc}") from exc
            self._loaded[id] = loaded
            self._joined.update(loaded.tools)
            self._dormant.pop(id, None)
            # Switched off earlier (here, or in a restarted conversation's saved history).
            off = await self.glove.switched_off_tools()
            back_on = [name for name in loaded.tools if name in off]
            if back_on:
                self.glove.switch_tools(enable=back_on)
        await self._emit(McpServerActivated(id, tuple(loaded.tools)))
        return list(loaded.tools)

    async def deactivate(self, id: str) -> list[str]:
        """Switch server ``id`` off: its tools are switched off from the next model call (they
        stay in the tool list, so the prompt cache survives, and a call to one is answered
        ``tool_inactive`` without running), its connection is closed, and the adapter marks it
        inactive. ``activate`` switches them back on. Idempotent.

        Returns:
            The bridged tool names that were switched off.
        """
        self._check_open()
        async with self._lock(id):
            loaded = self._loaded.pop(id, None)
            switched: list[str] = []
            if loaded is not None:
                switched = [name for name in loaded.tools if name in self._tools]
                if switched:
                    self.glove.switch_tools(disable=switched)
                self._dormant.setdefault(id, {}).update(loaded.tools)
                self._skills.drop_server(id)
                await loaded.connection.close()
            await self.adapter.deactivate(id)
        await self._emit(McpServerDeactivated(id, tuple(switched)))
        return switched

    # -- closing ------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every connection (in parallel) and the HTTP client the mount created.
        Idempotent; the tools stay offered and report the closed connection if called."""
        if self._state is MountState.CLOSED:
            return
        self._state = MountState.CLOSED
        self._remove_instructions()
        self._remove_skills()
        loaded, self._loaded = list(self._loaded.values()), {}
        try:
            results = await asyncio.gather(
                *(item.connection.close() for item in loaded), return_exceptions=True
            )
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, GloveMcpError):
                    logger.warning("closing an MCP connection failed", exc_info=result)
        finally:
            if self._own_pool:
                await self.pool.aclose()

    # -- resources, prompts and roots of the loaded servers ---

    def _roots_now(self) -> Sequence[str | Path] | Awaitable[Sequence[str | Path]]:
        given = self.options.roots
        return given() if callable(given) else list(self._roots)

    async def set_roots(self, roots: Sequence[str | Path]) -> None:
        """Replace the roots (directories or ``file://`` URIs) servers may work in and tell
        every loaded server (``roots/list_changed``). Only a mount made with ``roots=`` (a
        list) declares roots to its servers.

        Raises:
            McpStateError: the mount was made without ``roots``, or with a function (which
                already decides the roots each time a server asks).
        """
        if self.options.roots is None or callable(self.options.roots):
            raise McpStateError(
                "set_roots needs a mount made with roots=[...]; this one was made "
                + ("without roots" if self.options.roots is None else "with a roots function")
            )
        self._roots = list(roots)
        for id in self.loaded:
            connection = self.connection(id)
            if connection is None:
                continue
            try:
                await connection.notify_roots_changed()
            except GloveMcpError as exc:
                logger.info("could not tell %r the roots changed: %s", connection, exc)

    def _serving(self, id: str) -> McpServerConnection:
        """The connection of loaded server ``id``, or the error that says why there is none."""
        self._check_open()
        if id not in self.entries:
            raise McpUnknownServerError(id, list(self.entries))
        connection = self.connection(id)
        if connection is None:
            raise McpServerNotLoadedError(id, self.loaded)
        return connection

    async def list_resources(self, id: str) -> list[own.McpResource]:
        """The resources of loaded server ``id``.

        Raises:
            McpUnknownServerError: ``id`` is not in the catalogue.
            McpServerNotLoadedError: it is not loaded; ``activate`` it first.
            McpCapabilityError: it does not declare resources; and the connection's errors.
        """
        return await self._serving(id).list_resources()

    async def list_resource_templates(self, id: str) -> list[own.McpResourceTemplate]:
        """The resource templates of loaded server ``id``; raises like ``list_resources``."""
        return await self._serving(id).list_resource_templates()

    async def read_resource(self, id: str, uri: str) -> own.McpReadResult:
        """Read resource ``uri`` of loaded server ``id``; raises like ``list_resources``, and
        ``McpProtocolError`` when the server refuses (e.g. an unknown URI)."""
        return await self._serving(id).read_resource(uri)

    async def list_prompts(self, id: str) -> list[own.McpPrompt]:
        """The prompts of loaded server ``id``; raises like ``list_resources`` (with
        ``McpCapabilityError`` for a server without prompts)."""
        return await self._serving(id).list_prompts()

    async def get_prompt(
        self, id: str, name: str, arguments: dict[str, str] | None = None
    ) -> own.McpPromptResult:
        """Prompt ``name`` of loaded server ``id`` filled in with ``arguments``; raises like
        ``list_prompts``, and ``McpProtocolError`` for an unknown prompt or missing argument."""
        return await self._serving(id).get_prompt(name, arguments)

    def __repr__(self) -> str:
        state = self._state.value
        return f"<McpMount {self.adapter.identifier!r} loaded={self.loaded} state={state}>"


async def mount_mcp(
    glove: Glove,
    adapter: McpAdapter,
    entries: Sequence[McpCatalogueEntry],
    ambiguity_policy: AmbiguityPolicy | None = None,
    subagent_model: ModelAdapter | None = None,
    subagent_system_prompt: str | None = None,
    client_info: ClientInfo | None = None,
    filter_tools: ToolFilter | None = None,
    wrap_tool: WrapTool | None = None,
    *,
    sampling_model: ModelAdapter | None = None,
    allow_sampling: bool | Collection[str] = False,
    on_elicitation: OnElicitation | None = None,
    roots: RootsOption | None = None,
    approve_sampling: bool = False,
    sampling_max_tokens: int = DEFAULT_SAMPLING_MAX_TOKENS,
    log_level: LoggingLevel | None = None,
    tasks: TaskPolicy = "never",
    pool: McpClientPool | None = None,
    discovery_budget_tokens: int = DEFAULT_CATALOGUE_BUDGET,
    discovery_ranker: CatalogueRanker | Literal["default"] | None = "default",
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
    listing_limits: ListingLimits = DEFAULT_LISTING_LIMITS,
    max_result_chars: int = MountOptions.max_result_chars,
    max_message_bytes: int = MountOptions.max_message_bytes,
    mark_untrusted: bool = True,
    load_active: bool = True,
    apps: bool = False,
) -> McpMount:
    """Mount a conversation's MCP servers on ``glove``: the mount becomes a tool source of the
    Glove, reloads the active servers in parallel and offers their bridged tools. Call it
    before or after ``glove.build()``.

    Args:
        glove: the agent.
        adapter: which servers this conversation has active, and their credentials.
        entries: the catalogue; active ids not in it are ignored.
        ambiguity_policy: discovery policy (default: ``"auto-pick-best"`` in server mode,
            ``"interactive"`` otherwise).
        subagent_model: the discovery subagent's model (default: the Glove's).
        subagent_system_prompt: replaces the discovery subagent's prompt.
        client_info: how the client introduces itself to servers.
        filter_tools: ``(server_id, tool) -> bool``; False hides a tool.
        wrap_tool: ``(tool, entry) -> Tool``, applied to every bridged tool before it is
            offered.
        sampling_model: the model that answers servers' sampling requests (default: the
            Glove's own model at the time of the request), as a separate request that never
            touches the conversation.
        allow_sampling: which servers may sample: ``True`` (all), ``False`` (none, the
            default) or a collection of catalogue ids; ``McpCatalogueEntry.allow_sampling``
            overrides it per server.
        on_elicitation: ``(request) -> {"action": ..., "content": ...}``, sync or async,
            answers servers' elicitation requests. Without it they reach the Glove's display
            manager as ``mcp_elicitation`` slots, or are declined in server mode.
        roots: the directories (or ``file://`` URIs) servers may work in, or a function
            returning them; ``McpMount.set_roots`` changes a list later.
        approve_sampling: a person approves each sampling request first (an
            ``mcp_sampling`` slot; not in server mode).
        sampling_max_tokens: the most tokens one sampling request may produce.
        log_level: the level servers are asked to log at (None: their default); log
            messages go to the logger ``glove_mcp.mcp_server.<id>`` and to subscribers as
            ``mcp_log``.
        tasks: ``"never"`` (the default) calls tools whose tasks are optional plainly;
            ``"optional"`` runs them as tasks. Tools that require tasks always run as tasks.
        pool: the HTTP transport to share with other mounts and connections (never closed
            here); by default the mount makes its own and closes it in ``aclose()``.
        discovery_budget_tokens: ``find_capability``'s subagent gets the whole catalogue in
            its prompt while it fits this many tokens (about four characters each), else the
            best candidates and ``list_capabilities``. ``discovery_ranker``: a
            ``CatalogueRanker`` (``"default"``: BM25F and WordLlama; None: lexical only).
        call_timeout: seconds one request to a server (a tool call, a listing) may take
            (default 300; None: no limit); a call that takes longer gives the model an error
            naming the server and the timeout. ``McpCatalogueEntry.call_timeout`` overrides it.
        listing_limits: bounds on each server's tool listing: how many tools and how many
            bytes of definitions it may put in front of the model (``ListingLimits``; default
            128 tools, 10,000-character descriptions, 64,000-byte schemas, 400,000 bytes in
            all). Over a bound the server mounts with what fits, and the model, the log and
            the subscribers (``mcp_listing_limited``) are told what was left out. Tools past
            ``max_tools`` (up to ``max_held_tools``, 1,000) are held: the model searches and
            loads them with ``<id>__more_tools``, and they join as deferred tools.
        max_result_chars: characters of text one tool result keeps (100,000; the rest cut).
        max_message_bytes: bytes of one message from a server over HTTP (8 MiB; not read).
        mark_untrusted: results and descriptions in envelopes naming the server (on; False: off).
        load_active: reload the adapter's active servers now (the default). False when a
            turn preparer loads them under the conversation's lock before each turn anyway
            (``follow_activations``, several instances on one database): reading them here
            too would cost a second database round trip for nothing.
        apps: declare MCP Apps (``glove_mcp.extensions.apps``) to servers and hand their views
            to the application in results' ``render_data``; only where views can be shown
            (the web page of ``glove-mcp serve --web``), never in a terminal. Off by default.

    Returns:
        The ``McpMount``; close it with ``aclose()`` or ``async with``. A server that failed to
        reload is logged and reported as ``mcp_server_failed`` to the Glove's subscribers.
    """
    check_allow_sampling(allow_sampling, entries)
    check_call_timeout(call_timeout)
    options = MountOptions(
        ambiguity_policy=ambiguity_policy,
        subagent_model=subagent_model,
        subagent_system_prompt=subagent_system_prompt,
        client_info=client_info,
        filter_tools=filter_tools,
        wrap_tool=wrap_tool,
        pool=pool,
        sampling_model=sampling_model,
        allow_sampling=allow_sampling,
        approve_sampling=approve_sampling,
        sampling_max_tokens=sampling_max_tokens,
        roots=roots,
        log_level=log_level,
        on_elicitation=on_elicitation,
        tasks=tasks,
        call_timeout=call_timeout,
        listing_limits=listing_limits,
        max_result_chars=max_result_chars,
        max_message_bytes=max_message_bytes,
        mark_untrusted=mark_untrusted,
        apps=apps,
    )
    mount = McpMount(glove, adapter, entries, options)
    if load_active:
        await mount.reload()
    try:
        glove.fold(discovery_tool(mount, discovery_budget_tokens, discovery_ranker))
    except BaseException:
        await mount.aclose()
        raise
    return mount
