"""``SessionPage``: the page of one conversation another program's agent runs, on 127.0.0.1,
for a fresh secret in the link's fragment only; that agent's saved messages and live events,
nothing else of the file."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from glove_core import Glove, ScriptedModel, SqliteStore
from glove_mcp.server.session_page import SessionPage, servable_id


async def test_the_page_serves_the_agents_own_conversation_for_its_secret(
    tmp_path: Path,
) -> None:
    db = tmp_path / "chat.db"
    async with SqliteStore(db, "other") as other:  # another conversation of the file
        await (
            Glove(model=ScriptedModel(["Elsewhere."]), system_prompt="p", store=other)
            .build()
            .process_request("x")
        )
    async with SqliteStore(db, "s") as store:
        model = ScriptedModel(["Hello there.", "Again."])
        glove = Glove(model=model, system_prompt="p", store=store).build()
        await glove.process_request("hi")
        page = SessionPage(str(db), "s", glove)
        with pytest.raises(RuntimeError):
            _ = page.link
        await page.start()
        try:
            link = page.link
            base, fragment = link.split("/#", 1)
            assert base.startswith("http://127.0.0.1:")
            assert fragment.startswith("session=s&key=")
            secret = fragment.removeprefix("session=s&key=")
            assert secret not in repr(page)
            key = {"Authorization": f"Bearer {secret}"}
            async with httpx2.AsyncClient(base_url=base) as client:
                shown = (await client.get("/sessions/s", headers=key)).json()["messages"]
                assert [m.get("text") for m in shown] == ["hi", "Hello there."]
                # The agent is the program's: a turn it runs is what the page reads next.
                await glove.process_request("again")
                shown = (await client.get("/sessions/s", headers=key)).json()["messages"]
                assert shown[-1]["text"] == "Again."
                assert len(shown) == 4
                assert (await client.get("/sessions/s")).status_code == 401
                assert (await client.get("/sessions/other", headers=key)).status_code == 404
                assert (await client.get("/sessions", headers=key)).status_code == 404
                assert (await client.get("/")).status_code == 200
        finally:
            await page.aclose()
        assert not page.started
        with pytest.raises(RuntimeError):
            _ = page.link
        async with httpx2.AsyncClient() as client:
            with pytest.raises(httpx2.ConnectError):
                await client.get(base + "/")


async def test_a_new_start_has_a_new_secret_and_a_bad_id_is_refused(tmp_path: Path) -> None:
    assert not servable_id("has space") and not servable_id("..") and servable_id("chat-1")
    async with SqliteStore(tmp_path / "chat.db", "s") as store:
        glove = Glove(model=ScriptedModel(["ok"]), system_prompt="p", store=store).build()
        with pytest.raises(ValueError, match="cannot be served"):
            SessionPage(str(tmp_path / "chat.db"), "has space", glove)
        links = []
        for _ in range(2):
            page = SessionPage(str(tmp_path / "chat.db"), "s", glove)
            await page.start()
            links.append(page.link)
            await page.aclose()
        assert links[0].split("key=")[1] != links[1].split("key=")[1]
