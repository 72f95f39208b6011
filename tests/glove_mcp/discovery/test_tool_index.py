"""``glove_mcp.discovery.tool_index``: every reachable catalogue server's tools listed ahead
(real local MCP servers over HTTP and stdio, a real SQLite file), each credential sent only to
the URL it was issued for, and discovery ranking on them before the first activation."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer
from pydantic import SecretStr

from glove_core import Glove, ScriptedModel, ToolCall
from glove_mcp import McpCatalogueEntry, MemoryMcpAdapter, SqliteMcpAdapter, mount_mcp
from glove_mcp.adapter import LearnedTool
from glove_mcp.discovery import FIND_CAPABILITY
from glove_mcp.discovery.tool_index import IndexedServer, index_tools
from glove_mcp.oauth import MemoryOAuthStore, OAuthState
from glove_mcp.oauth.binding import credential_key
from glove_mcp.oauth.state import StoredTokens
from glove_mcp.testing import McpTestServer, serve
from glove_mcp.testing.servers import build_notes_server

NOTES_STDIO = [sys.executable, "-m", "glove_mcp.testing", "notes", "--stdio"]


def http(id: str, url: str, description: str = "Acme's official MCP server.") -> McpCatalogueEntry:
    return McpCatalogueEntry(id=id, name=id.title(), description=description, url=url)


def login(url: str, token: str) -> OAuthState:
    return OAuthState(
        server_url=url,
        tokens=StoredTokens(access_token=SecretStr(token), expires_at=time.time() + 3600),
    )


def states(outcomes: list[IndexedServer]) -> dict[str, str]:
    return {o.id: o.state for o in outcomes}


async def test_reachable_servers_are_listed_and_failing_ones_skipped(tmp_path: Path) -> None:
    async with serve("tracker") as tracker:
        catalogue = [
            http("acme", tracker),
            McpCatalogueEntry(id="pages", name="Pages", description="Pages.", command=NOTES_STDIO),
            http("down", "http://127.0.0.1:9/mcp"),
            McpCatalogueEntry(
                id="ghost", name="Ghost", description="x", command=["no-such-mcp-command-x"]
            ),
        ]
        seen: list[str] = []
        async with SqliteMcpAdapter(tmp_path / "chat.db", "indexer") as store:
            outcomes = await index_tools(
                catalogue, store, timeout=20, report=lambda o: seen.append(o.id)
            )
            learned = await store.get_learned_tools()
    assert states(outcomes) == {
        "acme": "listed",
        "pages": "listed",
        "down": "failed",
        "ghost": "failed",
    }
    assert [o.id for o in outcomes] == ["acme", "pages", "down", "ghost"]  # catalogue order
    assert sorted(seen) == ["acme", "down", "ghost", "pages"]
    by_id = {o.id: o for o in outcomes}
    assert "delete_issue" in [t.name for t in learned["acme"]]
    assert by_id["acme"].detail == f"{len(learned['acme'])} tools"
    assert "search_pages" in [t.name for t in learned["pages"]]
    assert all(t.description for t in learned["acme"])
    assert set(learned) == {"acme", "pages"}
    for failed in ("down", "ghost"):
        assert "\n" not in by_id[failed].detail and by_id[failed].detail


async def test_a_credential_goes_only_to_the_url_it_was_issued_for() -> None:
    # Both servers accept the same token: only the binding keeps it from the second.
    async with (
        serve("tracker", tokens={"tok-a"}) as first,
        serve("notes", tokens={"tok-a"}) as second,
    ):
        credentials = MemoryOAuthStore()
        await credentials.set(credential_key("alice", first), login(first, "tok-a"))
        # Stored under the second entry's id too, as an older version did: never used.
        await credentials.set("other", login(first, "tok-a"))
        catalogue = [http("acme", first), http("other", second)]
        store = MemoryMcpAdapter("indexer")
        alice = await index_tools(
            catalogue,
            store,
            credentials=credentials,
            principal="alice",
            login_command=lambda id: f"log in to {id}",
        )
        bob = await index_tools(
            catalogue, MemoryMcpAdapter("b"), credentials=credentials, principal="bob"
        )
    assert states(alice) == {"acme": "listed", "other": "needs_login"}
    assert alice[1].detail == "it needs a login: run log in to other"
    assert states(bob) == {"acme": "needs_login", "other": "needs_login"}
    assert set(await store.get_learned_tools()) == {"acme"}


async def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="concurrency must be an int of at least 1"):
        await index_tools([], MemoryMcpAdapter("c"), concurrency=0)
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        await index_tools([], MemoryMcpAdapter("c"), timeout=0)
    with pytest.raises(TypeError, match="store must be a LearnedToolsStore"):
        await index_tools([], object())  # type: ignore[arg-type]


@pytest.fixture
async def weak() -> AsyncIterator[list[McpCatalogueEntry]]:
    async with serve("tracker") as tracker, serve("notes") as notes:
        yield [http("acme", tracker), http("pages", notes, "Notes and pages.")]


async def test_discovery_ranks_on_indexed_tools_before_the_first_activation(
    weak: list[McpCatalogueEntry], tmp_path: Path
) -> None:
    path = tmp_path / "chat.db"
    async with SqliteMcpAdapter(path, "indexer") as store:
        await index_tools(weak, store)
    model = ScriptedModel(
        [
            [ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "delete an issue"})],
            [ToolCall(id="s1", name="list_capabilities", input={"query": "delete an issue"})],
            "acme can do it",
            "ok",
        ]
    )
    glove = Glove(model=model, system_prompt="main", server_mode=True)
    async with (
        SqliteMcpAdapter(path, "conversation") as adapter,
        await mount_mcp(glove, adapter, weak),
    ):
        assert await adapter.get_active() == []  # nothing was ever activated here
        glove.build()
        await glove.process_request("get rid of issue 3")
    sub = [r for r in model.requests if r.system != "main"]
    assert "delete_issue" in sub[0].system
    listed = sub[1].messages[-1].tool_results
    assert listed is not None
    (row, *_) = listed[0].result.data
    assert row["id"] == "acme" and "delete_issue" in row["tools"]


async def test_an_imported_server_not_set_up_yet_is_skipped_without_starting_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NOTES_TOKEN", raising=False)
    needs_key = {"registry": {"environment": [{"name": "NOTES_TOKEN", "required": True}]}}
    catalogue = [
        McpCatalogueEntry(
            id="unset",
            name="Unset",
            description="n",
            command=[*NOTES_STDIO, "<city>"],
            metadata=needs_key,
        ),
        McpCatalogueEntry(
            id="given",
            name="Given",
            description="n",
            command=NOTES_STDIO,
            env={"NOTES_TOKEN": "t"},
            metadata=needs_key,
        ),
    ]
    outcomes = await index_tools(catalogue, MemoryMcpAdapter("c"), timeout=20)
    assert states(outcomes) == {"unset": "failed", "given": "listed"}
    assert outcomes[0].detail == (
        "not set up yet: fill in the command's <city>; set the environment variable NOTES_TOKEN"
    )
    monkeypatch.setenv("NOTES_TOKEN", "t")
    catalogue[0] = catalogue[0].model_copy(update={"command": NOTES_STDIO})
    again = await index_tools(catalogue[:1], MemoryMcpAdapter("c"), timeout=20)
    assert states(again) == {"unset": "listed"}


HANDBOOK = "Answers questions about the Zanzibar fleet handbook: call search_pages first."


def notes_saying(instructions: str, ttl_ms: int | None = None) -> MCPServer:
    """The notes server with ``instructions``, its tools listed with ``ttlMs`` when given."""
    hints = {"tools/list": CacheHint(ttl_ms=ttl_ms, scope="public")} if ttl_ms else None
    return build_notes_server(instructions=instructions, cache_hints=hints)


class ToolsOnly:
    """A learned-tools store written before listings were kept: tools only."""

    def __init__(self) -> None:
        self.saved: dict[str, list[LearnedTool]] = {}

    async def save_learned_tools(self, server_id: str, tools: Sequence[LearnedTool]) -> None:
        self.saved[server_id] = list(tools)

    async def get_learned_tools(self) -> dict[str, list[LearnedTool]]:
        return dict(self.saved)


async def test_instructions_and_ttl_are_kept_and_a_fresh_listing_is_not_asked_again(
    tmp_path: Path,
) -> None:
    async with (
        McpTestServer(notes_saying(HANDBOOK, ttl_ms=600_000)) as cached,
        McpTestServer(notes_saying("Plain notes.")) as plain,
    ):
        catalogue = [http("fleet", cached.url), http("plain", plain.url)]
        async with SqliteMcpAdapter(tmp_path / "chat.db", "indexer") as store:
            first = await index_tools(catalogue, store)
            kept = await store.get_learned_listings()
            assert [(o.state, o.instructions, o.ttl_ms) for o in first] == [
                ("listed", HANDBOOK, 600_000),
                ("listed", "Plain notes.", None),
            ]
            assert (kept["fleet"].instructions, kept["fleet"].ttl_ms) == (HANDBOOK, 600_000)
            assert (kept["plain"].instructions, kept["plain"].ttl_ms) == ("Plain notes.", None)
            assert cached.control.methods["tools/list"] == 1

            # Fresh by its TTL: not contacted; without a TTL: listed again, as every run.
            again = await index_tools(catalogue, store)
            assert states(again) == {"fleet": "fresh", "plain": "listed"}
            fresh = again[0]
            assert fresh.detail.startswith(f"{len(fresh.tools)} tools kept, fresh until ")
            assert fresh.instructions == HANDBOOK and fresh.ttl_ms == 600_000
            assert [t.name for t in fresh.tools] == [t.name for t in first[0].tools]
            assert cached.control.methods["tools/list"] == 1
            assert plain.control.methods["tools/list"] == 2

            refreshed = await index_tools(catalogue, store, refresh=True)
            assert states(refreshed) == {"fleet": "listed", "plain": "listed"}
            assert cached.control.methods["tools/list"] == 2

        # A store of tools alone (written for the older protocol) keeps working: tools saved,
        # every server listed on every run.
        older = ToolsOnly()
        for _ in range(2):
            assert states(await index_tools(catalogue, older)) == {
                "fleet": "listed",
                "plain": "listed",
            }
        assert set(older.saved) == {"fleet", "plain"}
        assert cached.control.methods["tools/list"] == 4


async def test_refresh_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="refresh must be a bool, got str"):
        await index_tools([], MemoryMcpAdapter("c"), refresh="yes")  # type: ignore[arg-type]


async def test_discovery_ranks_on_indexed_instructions(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    async with serve("notes") as notes, McpTestServer(notes_saying(HANDBOOK)) as fleet:
        # The same tools and descriptions: only the instructions tell them apart.
        catalogue = [http("pages", notes), http("fleet", fleet.url)]
        async with SqliteMcpAdapter(path, "indexer") as store:
            await index_tools(catalogue, store)
        query = {"query": "zanzibar handbook"}
        model = ScriptedModel(
            [
                [ToolCall(id="m1", name=FIND_CAPABILITY, input={"need": "the fleet handbook"})],
                [ToolCall(id="s1", name="list_capabilities", input=query)],
                "fleet can do it",
                "ok",
            ]
        )
        glove = Glove(model=model, system_prompt="main", server_mode=True)
        async with (
            SqliteMcpAdapter(path, "conversation") as adapter,
            await mount_mcp(glove, adapter, catalogue, discovery_ranker=None),
        ):
            glove.build()
            await glove.process_request("what does the handbook say about storms?")
    sub = [r for r in model.requests if r.system != "main"]
    listed = sub[1].messages[-1].tool_results
    assert listed is not None
    rows = listed[0].result.data
    assert isinstance(rows, list) and [row["id"] for row in rows] == ["fleet"]
    assert HANDBOOK not in str(listed[0].result.data)  # ranked on, never shown
