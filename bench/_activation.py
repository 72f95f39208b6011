"""Tools that join mid-conversation, and what they cost the prompt cache (issue 18).

Two conversations of 30 model calls (10 requests x 3 calls) through the real ``Glove`` loop and
a real MCP mount over HTTP (``glove_mcp.testing`` servers), against the fake Messages API
(``AnthropicModel``, the real ``anthropic`` SDK) and the fake Chat Completions server
(``OpenAICompatModel``):

- ``activation``: ``find_capability`` activates the notes server at request 3 and the tracker
  at request 6 (the discovery subagent is a ``ScriptedModel``, so all 30 calls are the main
  agent's); the main agent then uses their tools.
- ``list_changed``: a mounted server adds a tool at request 4 (``tools/list_changed``); the
  main agent uses it from request 5 on.

Each runs twice against a fresh cache: as the loop sends it (deferred tools on Anthropic, the
stand-in tool on OpenAI-compatible APIs) and ``not deferred`` (the same requests with
``deferred_tools`` and ``tools_may_join`` cleared: joined tools go into the tool list, which is
what the loop did before).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer

from glove_core import (
    AbortSignal,
    AnthropicModel,
    CacheCollapse,
    Glove,
    ModelAdapter,
    ModelRequest,
    OpenAICompatModel,
    ScriptedModel,
    SubscriberEvent,
    Tool,
    ToolCall,
    ToolContext,
    Usage,
)
from glove_core.models import ModelResponse
from glove_core.subscribers import Notify
from glove_core.testing import FakeItem, FakeToolUse, serve_fake_anthropic, serve_fake_openai
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, mount_mcp
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.subscribers import McpListChanged
from glove_mcp.testing import serve

__all__ = ["COLUMNS", "CONVERSATIONS", "PROVIDERS", "Conversation", "Key", "Provider", "measure"]

Provider = Literal["anthropic", "openai"]
Conversation = Literal["activation", "list_changed"]
CONVERSATIONS: tuple[Conversation, ...] = ("activation", "list_changed")
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
Key = tuple[Provider, Conversation, bool]
"""(provider, conversation, deferred)."""
COLUMNS: list[Key] = [(p, c, d) for p in PROVIDERS for c in CONVERSATIONS for d in (True, False)]
PROXY = "glove_call_tool"
REQUESTS = 10
SYSTEM = (
    "You are a release assistant for a software team. You check builds, read notes and track "
    "issues. Be precise and brief. " * 8
)


class NotDeferred:
    """The model, sent each request without deferral: joined tools are ordinary tools."""

    def __init__(self, model: ModelAdapter) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        plain = dataclasses.replace(request, deferred_tools=frozenset(), tools_may_join=False)
        return await self.model.prompt(plain, notify, signal)


class WaitBefore:
    """The model, but call ``call`` waits for ``ready`` (a server's list change arrives on its
    own stream; the conversation must not outrun it)."""

    def __init__(self, model: ModelAdapter, call: int, ready: Callable[[], Awaitable[object]]):
        self.model, self.call, self.ready, self.calls = model, call, ready, 0

    @property
    def name(self) -> str:
        return self.model.name

    async def prompt(
        self, request: ModelRequest, notify: Notify, signal: AbortSignal | None = None
    ) -> ModelResponse:
        self.calls += 1
        if self.calls == self.call:
            await self.ready()
        return await self.model.prompt(request, notify, signal)


def _call(name: str, args: dict[str, Any], call_id: str, joined: bool, proxy: bool) -> FakeToolUse:
    if joined and proxy:
        return FakeToolUse(PROXY, {"name": name, "arguments": args}, id=call_id)
    return FakeToolUse(name, args, id=call_id)


def activation_script(proxy: bool) -> list[FakeItem]:
    items: list[FakeItem] = []
    for r in range(REQUESTS):
        if r == 3:
            items.append(FakeToolUse(FIND_CAPABILITY, {"need": "read the notes"}, id=f"r{r}-0"))
        elif r == 6:
            items.append(FakeToolUse(FIND_CAPABILITY, {"need": "the bug tracker"}, id=f"r{r}-0"))
        elif r > 3:
            items.append(_call("notes__search_pages", {"query": "release"}, f"r{r}-0", True, proxy))
        else:
            items.append(FakeToolUse("check_build", {"build": 800 + r}, id=f"r{r}-0"))
        if r >= 6:
            items.append(_call("tracker__list_issues", {}, f"r{r}-1", True, proxy))
        elif r >= 3:
            items.append(_call("notes__read_page", {"page_id": "p1"}, f"r{r}-1", True, proxy))
        else:
            items.append(FakeToolUse("read_changelog", {"version": f"2.{r}.0"}, id=f"r{r}-1"))
        items.append(f"Release 2.{r}.0: build {800 + r} passed, notes and issues checked.")
    return items


def list_changed_script(proxy: bool) -> list[FakeItem]:
    items: list[FakeItem] = []
    for r in range(REQUESTS):
        if r == 4:
            items.append(FakeToolUse("probe__grow", {}, id=f"r{r}-0"))
        elif r > 4:
            items.append(_call("probe__extra", {"word": f"w{r}"}, f"r{r}-0", True, proxy))
        else:
            items.append(FakeToolUse("check_build", {"build": 800 + r}, id=f"r{r}-0"))
        items.append(FakeToolUse("probe__lookup", {"word": f"v{r}"}, id=f"r{r}-1"))
        items.append(f"Release 2.{r}.0 looks healthy.")
    return items


def growing_server() -> MCPServer:
    """A server that adds the tool ``extra`` when ``grow`` is called."""
    server = MCPServer("probe", log_level="WARNING")

    @server.tool()
    def lookup(word: str) -> str:
        """Look a word up in the release glossary."""
        return f"{word}: a term of the release glossary, used in build reports. " * 3

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool extra."""

        def extra(word: str) -> str:
            """Explain a word in more depth."""
            return f"extra: {word} explained at length for the release notes. " * 3

        server.add_tool(extra)
        await ctx.notify_tools_changed()
        if ctx.protocol_version != "2026-07-28":
            await ctx.session.send_tool_list_changed()
        return "grown"

    return server


def folded_tools() -> list[Tool]:
    async def check_build(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return f"Build {arguments['build']}: passed 1,204 tests in 14m. Artifacts uploaded. " * 4

    async def read_changelog(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return f"Changelog {arguments['version']}: fixed login redirect; faster search. " * 5

    def schema(field: str, kind: str) -> dict[str, Any]:
        return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}

    return [
        Tool(
            "check_build",
            "Check the status of a CI build.",
            check_build,
            None,
            schema("build", "integer"),
        ),
        Tool(
            "read_changelog",
            "Read the changelog of a version.",
            read_changelog,
            None,
            schema("version", "string"),
        ),
    ]


def _usage(provider: Provider, raw: dict[str, Any]) -> Usage:
    if provider == "anthropic":
        return Usage(
            input_tokens=raw["input_tokens"],
            cache_read_tokens=raw["cache_read_input_tokens"],
            cache_write_tokens=raw["cache_creation_input_tokens"],
        )
    cached = raw["prompt_tokens_details"]["cached_tokens"]
    return Usage(input_tokens=raw["prompt_tokens"] - cached, cache_read_tokens=cached)


@asynccontextmanager
async def _fake(
    provider: Provider, script: list[FakeItem], usages: list[Usage]
) -> AsyncIterator[ModelAdapter]:
    """The model against a fresh fake; ``usages`` gets every call's usage as the fake reported
    it (the discovery subagent is scripted, so these are the main agent's calls only)."""
    if provider == "anthropic":
        async with serve_fake_anthropic() as messages_api:
            messages_api.script(*script)
            url = messages_api.base_url
            async with AnthropicModel("claude-bench", api_key="bench", base_url=url) as m:
                yield m
        pending, records = messages_api.pending, messages_api.requests
    else:
        async with serve_fake_openai() as chat_api:
            chat_api.script(*script)
            async with OpenAICompatModel(
                "gpt-bench", api_key="bench", base_url=chat_api.base_url
            ) as o:
                yield o
        pending, records = chat_api.pending, chat_api.requests
    assert pending == 0, "the script was not used up"
    usages.extend(_usage(provider, r.usage) for r in records if r.usage is not None)


async def run(
    provider: Provider, conversation: Conversation, deferred: bool
) -> tuple[list[Usage], int]:
    """Play one conversation; return each main call's usage and the cache_collapse count."""
    usages: list[Usage] = []
    collapses = 0
    changed = asyncio.Event()

    class Counter:
        async def record(self, event: SubscriberEvent) -> None:
            nonlocal collapses
            if isinstance(event, CacheCollapse):
                collapses += 1
            elif isinstance(event, McpListChanged):
                changed.set()

    proxy = provider == "openai" and deferred
    script = (
        activation_script(proxy) if conversation == "activation" else list_changed_script(proxy)
    )
    async with AsyncExitStack() as stack:
        if conversation == "activation":
            notes = await stack.enter_async_context(serve("notes"))
            tracker = await stack.enter_async_context(serve("tracker"))
            entries = [
                McpCatalogueEntry(
                    id="notes", name="Notes", url=notes, description="Pages of notes."
                ),
                McpCatalogueEntry(id="tracker", name="Tracker", url=tracker, description="Issues."),
            ]
            active: list[str] = []
        else:
            url = await stack.enter_async_context(serve(growing_server()))
            entries = [
                McpCatalogueEntry(id="probe", name="Probe", url=url, description="Glossary.")
            ]
            active = ["probe"]
        model: ModelAdapter = await stack.enter_async_context(_fake(provider, script, usages))
        if not deferred:
            model = NotDeferred(model)
        # list_changed: the call after grow (request 4, call 2 = the 14th) waits for the change.
        model = WaitBefore(model, 14, changed.wait) if conversation == "list_changed" else model
        glove = Glove(model=model, system_prompt=SYSTEM, server_mode=True)
        for tool in folded_tools():
            glove.fold(tool)
        subagent = ScriptedModel(
            [
                [ToolCall(id="s1", name="activate", input={"id": "notes"})],
                "Activated notes.",
                [ToolCall(id="s2", name="activate", input={"id": "tracker"})],
                "Activated tracker.",
            ]
        )
        glove.add_subscriber(Counter())
        mount = await mount_mcp(
            glove, MemoryMcpAdapter("bench", active=active), entries, subagent_model=subagent
        )
        async with mount:
            glove.build()
            for r in range(REQUESTS):
                await glove.process_request(f"How is release 2.{r}.0 doing?")
    return usages, collapses


async def measure() -> dict[Key, tuple[list[Usage], int]]:
    """Every (provider, conversation, deferred) run, one after another."""
    return {key: await run(*key) for key in COLUMNS}
