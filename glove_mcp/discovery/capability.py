"""``find_capability``: the main agent's tool that runs the discovery subagent.

Each call builds a small child Glove (its own in-memory store; the main agent's model unless
``subagent_model`` is given; the main agent's display manager, so ``ask_user`` reaches the
application) with the tools ``list_capabilities``, ``activate``, ``deactivate`` and — under the
interactive policy only — ``ask_user``. Activated servers' tools are folded onto the *main*
Glove and offered from its next model call; the result says which.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from glove_core import Glove, ModelAdapter, Tool, ToolContext, ToolResultData
from glove_core.stores.memory import PlainMemoryStore
from glove_core.subagents import run_subagent
from glove_core.tracing import internal_span
from glove_mcp.adapter import LearnedListingsStore, LearnedToolsStore, McpAdapter
from glove_mcp.discovery.index import CatalogueIndex, CatalogueItem
from glove_mcp.discovery.prompts import (
    CANDIDATES,
    DEFAULT_CATALOGUE_BUDGET,
    compact_catalogue,
    fits,
    policy_prompt,
)
from glove_mcp.discovery.ranker import CatalogueRanker
from glove_mcp.errors import (
    McpActivationError,
    McpAuthExpiredError,
    McpUnknownServerError,
    OAuthLoginRequiredError,
)
from glove_mcp.extensions.skills import McpSkill

__all__ = ["FIND_CAPABILITY", "MCP_PICKER", "DiscoveryEntry", "DiscoveryMount", "discovery_tool"]

logger = logging.getLogger(__name__)

_TOOLS_LISTED = 20
"""Known tool names ``list_capabilities`` shows per server."""

FIND_CAPABILITY = "find_capability"
MCP_PICKER = "mcp_picker"
"""The renderer name of the ``ask_user`` display slot."""


class DiscoveryEntry(CatalogueItem, Protocol):
    """What discovery reads of a catalogue entry; ``McpCatalogueEntry`` is one."""

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Free-form data; ``"login_command"`` overrides the login advice."""
        ...


class DiscoveryMount(Protocol):
    """What ``find_capability`` needs of the mount it activates servers on; ``McpMount`` is
    one. Discovery reads the catalogue and the main Glove, and asks the mount to activate."""

    @property
    def glove(self) -> Glove:
        """The main agent."""
        ...

    @property
    def adapter(self) -> McpAdapter:
        """The conversation's adapter (which servers are active)."""
        ...

    @property
    def entries(self) -> Mapping[str, DiscoveryEntry]:
        """The catalogue, by id."""
        ...

    @property
    def loaded(self) -> list[str]:
        """Ids whose tools are folded now."""
        ...

    @property
    def ambiguity_policy(self) -> str:
        """``"interactive"``, ``"auto-pick-best"`` or ``"defer-to-main"``."""
        ...

    @property
    def subagent_model(self) -> ModelAdapter | None:
        """The subagent's model (None: the main agent's)."""
        ...

    @property
    def subagent_system_prompt(self) -> str | None:
        """Replaces the subagent's prompt."""
        ...

    def tool_names(self, id: str) -> Mapping[str, str]:
        """The folded tools of server ``id``: bridged name → real name."""
        ...

    def connection(self, id: str) -> object | None:
        """The open connection of server ``id``, if it is loaded."""
        ...

    def skills(self, id: str) -> Sequence[McpSkill]:
        """The skills of loaded server ``id`` ([] when none or not loaded)."""
        ...

    async def activate(self, id: str) -> list[str]:
        """Load server ``id`` and fold its tools; returns their names."""
        ...

    async def deactivate(self, id: str) -> list[str]:
        """Switch server ``id`` off; returns the tool names switched off."""
        ...


class FindCapabilityInput(BaseModel):
    """Input of ``find_capability``."""

    need: str = Field(
        min_length=1,
        description="What you need to be able to do, in a short sentence (e.g. 'create an "
        "issue in the bug tracker').",
    )


MAX_PAGE_SIZE = 30
"""The most servers one ``list_capabilities`` page holds."""


class ListInput(BaseModel):
    query: str | None = Field(default=None, description="A few words of the need.")
    tags: list[str] | None = Field(default=None, description="Only servers with all tags.")
    keywords: list[str] | None = Field(
        default=None,
        description="Only servers whose name, description, tags, keywords or tools mention "
        "every one of these words (e.g. ['postgres']).",
    )
    page: int = Field(default=1, ge=1, description="1 for the best matches, 2 for the next.")
    limit: int = Field(
        default=10, ge=1, le=MAX_PAGE_SIZE, description="Servers per page (at most 30)."
    )


class IdInput(BaseModel):
    id: str = Field(description="A catalogue id.")


class AskInput(BaseModel):
    question: str = Field(description="The question for the user.")
    options: list[str] = Field(min_length=1, description="Catalogue ids to choose from.")


def login_command(mount: DiscoveryMount, id: str) -> str:
    """The command that logs in to server ``id`` (``metadata["login_command"]`` overrides)."""
    entry = mount.entries.get(id)
    custom = entry.metadata.get("login_command") if entry else None
    return str(custom) if custom else f"glove-mcp auth {id}"


def _needs_login(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, McpAuthExpiredError | OAuthLoginRequiredError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _error(message: str) -> ToolResultData:
    return ToolResultData(status="error", message=message)


class _Discovery:
    """The tools of one mount's discovery subagent."""

    def __init__(
        self,
        mount: DiscoveryMount,
        budget_tokens: int,
        ranker: CatalogueRanker | Literal["default"] | None = "default",
    ) -> None:
        self.mount = mount
        self.budget_tokens = budget_tokens
        # Tool names make servers findable by what they can do; start with those loaded now,
        # and add what the adapter learnt in earlier conversations (``learn``).
        self.index = CatalogueIndex(
            list(mount.entries.values()),
            tool_names={id: list(mount.tool_names(id).values()) for id in mount.loaded},
            ranker=ranker,
        )
        # A ranker (the default's WordLlama, an embedding model of one's own) may take
        # milliseconds of CPU, or seconds to load: it runs in a worker thread, one search at a
        # time; lexical-only stays on the loop. The index is not thread-safe (its lazy build
        # reads what ``add_tools`` changes), so changes to it take the same lock.
        self._search_lock = asyncio.Lock()

    async def search(
        self, query: str, tags: Iterable[str] | None = None, limit: int = 10
    ) -> list[DiscoveryEntry]:
        """``CatalogueIndex.search``, off the event loop when a ranker is set."""
        if self.index.ranker is None:
            return self.index.search(query, tags, limit=limit)
        async with self._search_lock:
            return await asyncio.to_thread(self.index.search, query, tags, limit=limit)

    async def learn(self) -> None:
        """Index the tools the adapter kept from servers listed before, and the servers'
        instructions (if it keeps them)."""
        adapter = self.mount.adapter
        if not isinstance(adapter, LearnedToolsStore):
            return
        try:
            learned = await adapter.get_learned_tools()
            listings = (
                await adapter.get_learned_listings()
                if isinstance(adapter, LearnedListingsStore)
                else {}
            )
        except Exception as exc:  # learning is an aid: ranking goes on without it
            logger.warning("could not read the learned tools of %r: %s", adapter, exc)
            return
        async with self._search_lock:
            for id, tools in learned.items():
                if id in self.mount.entries:
                    self.index.add_tools(id, tools)
            for id, listing in listings.items():
                if id in self.mount.entries:
                    self.index.add_instructions(id, listing.instructions)

    def known_tools(self) -> dict[str, list[str]]:
        """Known tool names per catalogue id (for the prompt and ``list_capabilities``)."""
        names = {id: list(self.index.tool_names(id)) for id in self.mount.entries}
        return {id: tools for id, tools in names.items() if tools}

    async def active(self) -> set[str]:
        return set(await self.mount.adapter.get_active()) | set(self.mount.loaded)

    def _mentioning(self, keywords: list[str]) -> set[str]:
        """Ids of the entries whose text (name, description, tags, keywords, tools) holds
        every keyword, case-insensitively."""
        wanted = [k.strip().lower() for k in keywords if k.strip()]
        return {
            e.id
            for e in self.index.entries
            if all(k in self.index.entry_text(e.id).lower() for k in wanted)
        }

    async def list_capabilities(self, input: ListInput, ctx: ToolContext) -> ToolResultData:
        start = (input.page - 1) * input.limit
        try:
            if input.keywords:
                async with self._search_lock:
                    allowed = self._mentioning(input.keywords)
                # Filtered after ranking: rank every entry, keep those that mention them; the
                # ones the query does not match follow, in catalogue order (the keywords
                # chose them).
                ranked = await self.search(input.query or "", input.tags, limit=len(self.index))
                matches = [e for e in ranked if e.id in allowed]
                seen = {e.id for e in matches}
                # An empty query: the tag filter alone, in catalogue order (no ranking).
                rest = await self.search("", input.tags, limit=len(self.index))
                matches += [e for e in rest if e.id in allowed and e.id not in seen]
            else:
                matches = await self.search(
                    input.query or "", input.tags, limit=start + input.limit + 1
                )
        except (TypeError, ValueError) as exc:
            return _error(f"bad list_capabilities input: {exc}")
        more = len(matches) > start + input.limit
        matches = matches[start : start + input.limit]
        active = await self.active()
        rows = [
            {
                "id": e.id,
                "name": e.name,
                "description": e.description,
                "tags": list(e.tags),
                "keywords": list(getattr(e, "keywords", None) or ()),
                "tools": list(self.index.tool_names(e.id))[:_TOOLS_LISTED],
                "active": e.id in active,
                **_skill_field(self.mount.skills(e.id)),
            }
            for e in matches
        ]
        if not rows and input.page > 1:
            return ToolResultData(data=f"no more matches after page {input.page - 1}")
        if not rows:
            return ToolResultData(
                data="no catalogue entry matches; try other words, or fewer tags or keywords"
            )
        if more:
            # A last line, not a wrapper: every row stays where a model expects a server.
            note = f"more matches: call list_capabilities again with page={input.page + 1}"
            return ToolResultData(data=[*rows, {"more": note}])
        return ToolResultData(data=rows)

    async def activate(self, input: IdInput, ctx: ToolContext) -> ToolResultData:
        try:
            names = await self.mount.activate(input.id)
        except McpUnknownServerError:
            known = ", ".join(sorted(self.mount.entries))
            return _error(f"unknown id {input.id!r}; catalogue ids: {known}")
        except McpActivationError as exc:
            if _needs_login(exc):
                command = login_command(self.mount, input.id)
                return _error(
                    f"server {input.id!r} needs a login that has not happened (or has expired)."
                    f" Nothing was activated. Tell the user to run: {command}"
                )
            return _error(f"could not activate {input.id!r}; nothing was activated: {exc}")
        connection = self.mount.connection(input.id)
        if connection is not None:
            async with self._search_lock:  # not while a search builds the index in a thread
                self.index.add_tool_names(input.id, self.mount.tool_names(input.id).values())
        # No tool_references here: the subagent is never offered these tools; the main
        # agent's find_capability result references them.
        return ToolResultData(
            data={
                "activated": input.id,
                "tools": names,
                **_skill_field(self.mount.skills(input.id)),
            }
        )

    async def deactivate(self, input: IdInput, ctx: ToolContext) -> ToolResultData:
        if input.id not in self.mount.entries:
            return _error(f"unknown id {input.id!r}")
        removed = await self.mount.deactivate(input.id)
        return ToolResultData(data={"deactivated": input.id, "tools_removed": removed})

    async def ask_user(self, input: AskInput, ctx: ToolContext) -> ToolResultData:
        unknown = [o for o in input.options if o not in self.mount.entries]
        if unknown:
            return _error(f"options must be catalogue ids; unknown: {', '.join(unknown)}")
        options = [
            {
                "id": o,
                "name": self.mount.entries[o].name,
                "description": self.mount.entries[o].description,
            }
            for o in input.options
        ]
        choice = await ctx.display.push_and_wait(
            MCP_PICKER,
            {"question": input.question, "options": options},
            signal=ctx.signal,
            call_id=ctx.call_id,
        )
        if choice is None or choice == "":
            return ToolResultData(data="the user chose none of them")
        return ToolResultData(data={"user_chose": choice})

    def child_tools(self, policy: str) -> list[Tool]:
        tools = [
            Tool(
                name="list_capabilities",
                description="Rank the catalogue for a query: id, name, description, tags, "
                "keywords, known tool names, and whether each server is active, best first. "
                "Filter with tags or keywords (words every result must mention); page=2, 3, "
                "... shows further matches. Search again in other words when nothing fits.",
                do=self.list_capabilities,
                input_model=ListInput,
                parallel_safe=True,
            )
        ]
        if policy != "defer-to-main":
            tools += [
                Tool(
                    name="activate",
                    description="Connect a server and give its tools to the main agent. "
                    "Returns the new tool names.",
                    do=self.activate,
                    input_model=IdInput,
                ),
                Tool(
                    name="deactivate",
                    description="Unload a server's tools from the main agent.",
                    do=self.deactivate,
                    input_model=IdInput,
                ),
            ]
        if policy == "interactive":
            tools.append(
                Tool(
                    name="ask_user",
                    description="Ask the user to pick one of several servers.",
                    do=self.ask_user,
                    input_model=AskInput,
                )
            )
        return tools

    async def prompt(self, policy: str, active: set[str], need: str) -> str:
        """The subagent's prompt: the whole catalogue if it fits, else the best candidates
        (ranked only then: a whole catalogue needs no ranking)."""
        entries = list(self.mount.entries.values())
        tools = self.known_tools()
        candidates: list[DiscoveryEntry] = []
        if not fits(compact_catalogue(entries, active, tools), self.budget_tokens):
            try:
                candidates = await self.search(need, limit=CANDIDATES)
            except (TypeError, ValueError) as exc:  # a custom ranker's bad answer
                logger.warning("ranking the catalogue for the subagent failed: %s", exc)
        return policy_prompt(
            policy, entries, active, self.budget_tokens, candidates=candidates, tools=tools
        )

    async def find_capability(self, input: FindCapabilityInput, ctx: ToolContext) -> ToolResultData:
        # The subagent's own invoke_agent span, and the activations it makes, are children.
        attributes = {"glove.discovery.policy": self.mount.ambiguity_policy}
        with internal_span(FIND_CAPABILITY, attributes) as span:
            result = await self._find_capability(input, ctx)
            if span is not None and isinstance(result.render_data, dict):
                span.set_attribute(
                    "glove.discovery.activated", tuple(result.render_data.get("activated", ()))
                )
            return result

    async def _find_capability(
        self, input: FindCapabilityInput, ctx: ToolContext
    ) -> ToolResultData:
        mount = self.mount
        main = mount.glove
        policy = mount.ambiguity_policy
        before = set(mount.loaded)
        # Once per call: the prompt and every list_capabilities of this call rank on it.
        await self.learn()
        active = await self.active()
        system = mount.subagent_system_prompt or await self.prompt(policy, active, input.need)

        def build_child() -> Glove:
            child = Glove(
                model=mount.subagent_model or main.model,
                system_prompt=system,
                store=PlainMemoryStore(f"{FIND_CAPABILITY}:{ctx.call_id}"),
                display_manager=main.display_manager,
                server_mode=main.server_mode,
                max_turns=12,
            )
            for tool in self.child_tools(policy):
                child.fold(tool)
            return child

        text = await run_subagent(main, FIND_CAPABILITY, build_child, input.need, ctx)
        added = [id for id in mount.loaded if id not in before]
        new_tools = [name for id in added for name in mount.tool_names(id)]
        if new_tools:
            servers = ", ".join(added)
            summary = (
                f"Activated {servers}. These tools are available from your next step: "
                f"{', '.join(new_tools)}."
            )
        elif policy == "defer-to-main":
            summary = "Nothing was activated (candidates only)."
        else:
            summary = "No new tools were activated."
        skills = _skills_summary(mount, added)
        if skills:
            summary = f"{summary}\n{skills}"
        body = f"{text}\n\n{summary}" if text else summary
        return ToolResultData(
            data=body,
            render_data={"activated": added, "tools": new_tools},
            tool_references=new_tools or None,  # loads them, keeping the cached prefix intact
        )


def _skill_field(skills: Sequence[McpSkill]) -> dict[str, Any]:
    """A catalogue row's ``skills`` (name and description), left out when there are none."""
    if not skills:
        return {}
    return {"skills": [{"name": s.name, "description": s.description} for s in skills]}


def _skills_summary(mount: DiscoveryMount, ids: Sequence[str]) -> str:
    """The skills the servers ``ids`` bring, and the tool that loads them ("" when none)."""
    lines = []
    for id in ids:
        skills = mount.skills(id)
        if skills:
            named = "; ".join(f"{s.name} ({s.description})" for s in skills)
            lines.append(f"Skills of {id}: {named}. Load one with {id}__use_skill.")
    return "\n".join(lines)


def discovery_tool(
    mount: DiscoveryMount,
    budget_tokens: int = DEFAULT_CATALOGUE_BUDGET,
    ranker: CatalogueRanker | Literal["default"] | None = "default",
) -> Tool:
    """The ``find_capability`` tool for ``mount`` (``mount_mcp`` folds it).

    Args:
        mount: the mount whose catalogue is searched and whose servers are activated.
        budget_tokens: the catalogue is put in the subagent's prompt when it fits this budget
            (otherwise its best candidates for the need).
        ranker: ranks the catalogue for the subagent (default: BM25F fused with WordLlama;
            None: lexical BM25F only).

    Raises:
        TypeError: ``ranker`` is not a ``CatalogueRanker``.
    """
    discovery = _Discovery(mount, budget_tokens, ranker)
    return Tool(
        name=FIND_CAPABILITY,
        description=(
            "Find and switch on tools you do not have yet (for example a notes app, a bug "
            "tracker, email or calendar). Describe the need in a short sentence; the matching "
            "server's tools become available from your next step."
        ),
        do=discovery.find_capability,
        input_model=FindCapabilityInput,
        # Ranking and activating again change nothing more: a durable turn that died during
        # discovery runs it again (its recorded result is used once it finished).
        idempotent=True,
    )
