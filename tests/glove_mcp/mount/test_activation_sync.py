"""Several instances on PostgreSQL: a server one instance activates for a conversation is
offered by the others at their next turn, and one it deactivates is dropped."""

from __future__ import annotations

# ruff: noqa: E402 -- without the postgres extra this module skips before its imports fail
from tests._postgres import require_postgres_driver

require_postgres_driver()

from glove_core import Glove, ScriptedModel
from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore
from glove_mcp import McpCatalogueEntry, mount_mcp
from glove_mcp.adapter_postgres import PostgresMcpAdapter
from glove_mcp.mount.activation_sync import follow_activations
from glove_mcp.testing import serve


async def test_an_activation_on_one_instance_reaches_the_others(postgres_url: str) -> None:
    async with (
        serve("notes") as url,
        PostgresDatabase(postgres_url) as here,
        PostgresDatabase(postgres_url) as there,
    ):
        entries = [McpCatalogueEntry(id="notes", name="Notes", description="pages", url=url)]
        model = ScriptedModel(["one", "two"])
        glove = Glove(model=model, system_prompt="s", store=PostgresStore(here, "c"))
        mount = await mount_mcp(glove, adapter=PostgresMcpAdapter(here, "c"), entries=entries)
        follow_activations(glove, mount)
        glove.build()
        other = Glove(model=ScriptedModel([]), system_prompt="s", store=PostgresStore(there, "c"))
        other_mount = await mount_mcp(
            other, adapter=PostgresMcpAdapter(there, "c"), entries=entries
        )
        try:
            await other_mount.activate("notes")  # e.g. find_capability, on another instance
            await glove.process_request("first")
            assert "notes__read_page" in {t.name for t in model.requests[0].tools}
            assert mount.loaded == ["notes"]
            await other_mount.deactivate("notes")
            await glove.process_request("second")
            # Switched off here too (its tools stay listed, switched off, for the cache).
            assert mount.loaded == []
        finally:
            await other_mount.aclose()
            await mount.aclose()


class _CountingAdapter(PostgresMcpAdapter):
    """Counts the activations recorded through it."""

    recorded = 0

    async def activate(self, id: str) -> None:
        self.recorded += 1
        await super().activate(id)


async def test_a_following_mount_loads_at_the_first_turn_without_recording_again(
    postgres_url: str,
) -> None:
    async with (
        serve("notes") as url,
        PostgresDatabase(postgres_url) as here,
        PostgresDatabase(postgres_url) as there,
    ):
        entries = [McpCatalogueEntry(id="notes", name="Notes", description="pages", url=url)]
        await PostgresMcpAdapter(there, "c").activate("notes")  # another instance, earlier
        model = ScriptedModel(["one"])
        glove = Glove(model=model, system_prompt="s", store=PostgresStore(here, "c"))
        adapter = _CountingAdapter(here, "c")
        mount = await mount_mcp(glove, adapter=adapter, entries=entries, load_active=False)
        follow_activations(glove, mount)
        glove.build()
        try:
            assert mount.loaded == []  # nothing read or loaded before a turn
            await glove.process_request("first")
            assert mount.loaded == ["notes"]
            assert "notes__read_page" in {t.name for t in model.requests[0].tools}
            assert adapter.recorded == 0  # already recorded active: not written again
        finally:
            await mount.aclose()


async def test_a_server_switched_off_here_and_back_on_elsewhere_comes_back_on(
    postgres_url: str,
) -> None:
    async with (
        serve("notes") as url,
        PostgresDatabase(postgres_url) as here,
        PostgresDatabase(postgres_url) as there,
    ):
        entries = [McpCatalogueEntry(id="notes", name="Notes", description="pages", url=url)]
        glove = Glove(
            model=ScriptedModel(["one"]), system_prompt="s", store=PostgresStore(here, "c")
        )
        mount = await mount_mcp(glove, adapter=PostgresMcpAdapter(here, "c"), entries=entries)
        follow_activations(glove, mount)
        glove.build()
        await mount.activate("notes")
        await mount.deactivate("notes")
        assert "notes__read_page" in await glove.switched_off_tools()
        other = Glove(model=ScriptedModel([]), system_prompt="s", store=PostgresStore(there, "c"))
        other_mount = await mount_mcp(
            other, adapter=PostgresMcpAdapter(there, "c"), entries=entries
        )
        try:
            await other_mount.activate("notes")
            await glove.process_request("first")
            assert mount.loaded == ["notes"]
            assert "notes__read_page" not in await glove.switched_off_tools()
        finally:
            await other_mount.aclose()
            await mount.aclose()
