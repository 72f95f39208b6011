"""``glove-mcp demo``: the whole stack on this machine, with no keys and no network.

Local notes and tracker MCP servers start in-process (the tracker behind a local OAuth
authorization server), the OAuth login runs headlessly, a catalogue of the two is mounted with
discovery on, and a short conversation shows the agent discovering the tracker, activating it,
calling its tools and answering. With ``ANTHROPIC_API_KEY`` set, Claude plays the agent and the
demo stays interactive; without it, a scripted model plays the conversation.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from contextlib import AsyncExitStack
from typing import Any, TextIO
from urllib.parse import urljoin

import httpx2

from glove_core import (
    Glove,
    Message,
    ModelAdapter,
    ModelRequest,
    ScriptedModel,
    ToolCall,
)
from glove_core.models.scripted import ScriptItem
from glove_mcp.adapter import MemoryMcpAdapter
from glove_mcp.catalogue import McpCatalogueEntry
from glove_mcp.cli.console import ConsolePrinter, chat_loop
from glove_mcp.cli.progress import Progress, color_wanted, retrying_policy
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.mount import mount_mcp
from glove_mcp.oauth import MemoryOAuthStore, OAuthTokenSource, run_mcp_oauth

__all__ = ["DEMO_QUESTION", "demo_script", "run_demo"]

DEMO_QUESTION = (
    "What's open in our bug tracker? Also file an issue: the login page loops back to itself "
    "after a password reset."
)
SYSTEM_PROMPT = (
    "You are a helpful engineering assistant. When you need a capability you do not have, "
    "call find_capability with a short description of the need. Be brief."
)
DEFAULT_MODEL = "claude-sonnet-4-5"


def demo_script() -> list[ScriptItem]:
    """The offline conversation: main agent and discovery subagent share one scripted model,
    so the items alternate in the order the calls happen."""

    def summary(request: ModelRequest) -> str:
        listed: list[dict[str, Any]] = []
        created: dict[str, Any] = {}
        for message in request.messages:
            for result in message.tool_results or []:
                data = result.result.data
                if result.name.endswith("list_issues") and isinstance(data, dict):
                    listed = list(data.get("issues", []))
                if result.name.endswith("create_issue") and isinstance(data, dict):
                    created = data
        open_issues = [i for i in listed if i.get("state") == "open"]
        lines = [f"The tracker has {len(open_issues)} open issue(s) before mine:"]
        lines += [f"- {i['id']}: {i['title']} (priority {i['priority']})" for i in open_issues]
        if created:
            lines.append(f"I filed {created.get('id')}: {created.get('title')}.")
        return "\n".join(lines)

    return [
        Message(
            sender="agent",
            text="I don't have bug-tracker tools yet; let me find them.",
            tool_calls=[
                ToolCall(
                    id="main-1",
                    name=FIND_CAPABILITY,
                    input={"need": "list and create issues in the bug tracker"},
                )
            ],
        ),
        [ToolCall(id="sub-1", name="list_capabilities", input={"query": "bug tracker issues"})],
        [ToolCall(id="sub-2", name="activate", input={"id": "tracker"})],
        "Activated the tracker; its issue tools are ready.",
        [
            ToolCall(id="main-2", name="tracker__list_issues", input={"state": "open"}),
            ToolCall(
                id="main-3",
                name="tracker__create_issue",
                input={
                    "title": "Login page loops after password reset",
                    "description": "After resetting a password, /login redirects to itself.",
                    "priority": 2,
                },
            ),
        ],
        summary,
    ]


async def _browse(url: str) -> None:
    """A stand-in for the user's browser: follow the (auto-approved) authorize redirects to
    the local callback listener."""
    async with httpx2.AsyncClient(timeout=10.0) as client:
        response = await client.get(url)
        for _ in range(10):
            if response.status_code not in (301, 302, 303, 307, 308):
                return
            response = await client.get(urljoin(str(response.url), response.headers["location"]))


async def run_demo(
    out: TextIO,
    *,
    api_key: str | None,
    interactive: bool,
    offline_reason: str | None = None,
    progress: Progress | None = None,
) -> int:
    """Run the demo; returns the exit status.

    Args:
        out: where the demo writes.
        api_key: Claude plays the agent with this key; None: the scripted model.
        interactive: with Claude, go on chatting after the scripted question.
        offline_reason: why there is no key although one is set (``--offline``).
        progress: the indicator shown while the model thinks.
    """
    progress = progress if progress is not None else Progress(enabled=False)
    from glove_mcp.testing import serve, serve_oauth_server
    from glove_mcp.testing.servers import build_tracker_server

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    if api_key:
        say("glove-mcp demo: Claude plays the agent (ANTHROPIC_API_KEY is set).")
    elif offline_reason:
        say(
            f"glove-mcp demo: OFFLINE ({offline_reason}), so a scripted model plays the "
            "agent's part. The servers, OAuth login, discovery and tool calls below are real."
        )
    else:
        say(
            "glove-mcp demo: OFFLINE — no ANTHROPIC_API_KEY, so a scripted model plays the "
            "agent's part. The servers, OAuth login, discovery and tool calls below are real."
        )
    async with AsyncExitStack() as stack:
        say("• starting local MCP servers: notes (open) and tracker (behind local OAuth)…")
        notes_url = await stack.enter_async_context(serve("notes"))
        tracker = await stack.enter_async_context(serve_oauth_server(build_tracker_server))
        say(f"  notes   {notes_url}\n  tracker {tracker.url}")

        say("• logging in to the tracker: discovery, client registration, PKCE (auto-approved)…")
        store = MemoryOAuthStore()
        visits: list[asyncio.Task[None]] = []
        real_stdin = sys.stdin
        sys.stdin = io.StringIO("")  # the login must not read the user's first typed line
        try:
            login = await run_mcp_oauth(
                tracker.url,
                store,
                "tracker",
                port=0,
                open_browser=False,
                on_authorize_url=lambda url: visits.append(asyncio.create_task(_browse(url))),
                # The demo's stand-in browser answers the callback; nobody pastes anything.
                on_progress=lambda text: None if "stdin" in text else say(f"  {text}"),
                timeout=30,
            )
        finally:
            sys.stdin = real_stdin
        await asyncio.gather(*visits)
        say(f"  {login.status}: {login.tool_count} tools verified")

        source = OAuthTokenSource(
            store, "tracker", tracker.url, login_command="glove-mcp auth tracker"
        )

        async def token(server_id: str) -> str | None:
            return await source.access_token() if server_id == "tracker" else None

        entries = [
            McpCatalogueEntry(
                id="notes",
                name="Notes",
                url=notes_url,
                description="Search, read, create and update pages of team notes.",
                tags=["docs", "wiki", "notes"],
            ),
            McpCatalogueEntry(
                id="tracker",
                name="Tracker",
                url=tracker.url,
                description="List, create, update and delete issues in the bug tracker.",
                tags=["issues", "tickets", "bugs"],
            ),
        ]
        model: ModelAdapter
        if api_key:
            from glove_core.models.anthropic import AnthropicModel

            model = AnthropicModel(
                os.environ.get("GLOVE_MODEL", DEFAULT_MODEL),
                api_key=api_key,
                retry=retrying_policy(progress),
            )
        else:
            model = ScriptedModel(demo_script())
        glove = Glove(model=model, system_prompt=SYSTEM_PROMPT, server_mode=True)
        printer = ConsolePrinter(out, color=color_wanted(out), progress=progress)
        glove.add_subscriber(printer)
        say("• mounting the catalogue (notes, tracker) with find_capability discovery…")
        # The offline script reads the results' structured data, so only a real model gets
        # them in their untrusted-content envelopes.
        mount = await mount_mcp(
            glove,
            adapter=MemoryMcpAdapter("demo", tokens=token),
            entries=entries,
            mark_untrusted=bool(api_key),
        )
        stack.push_async_callback(mount.aclose)
        stack.push_async_callback(glove.aclose)
        glove.build()

        say(f"\nyou: {DEMO_QUESTION}")
        progress.show("thinking…")
        await glove.process_request(DEMO_QUESTION)
        printer.end_turn()
        say(f"\n• active servers now: {', '.join(mount.loaded) or 'none'}")
        if api_key and interactive:
            await chat_loop(glove, printer, out)
    say("• demo finished: servers stopped.")
    return 0
