"""Principals on the headless server: sessions belong to who created them, on SQLite and
PostgreSQL; an admin lists and reads every one; failed authentication is throttled; limits."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from glove_core import Glove, Message, ScriptedModel, SqliteStore, ToolCall, tool
from glove_core.event_queue import SqliteEventQueue
from glove_core.events import EventsConfig
from glove_mcp.server import HeadlessServer, SessionStore
from glove_mcp.server.principals import (
    ApiKeys,
    FailureThrottle,
    Principal,
    key_digest,
    session_owner,
)
from tests.glove_mcp.server._follow import follow
from tests.glove_mcp.server._harness import running, sse_events

ALICE = "alice-key-0123456789abcdef"
BOB = "bob-key-0123456789abcdefgh"
ROOT = "root-key-0123456789abcdefg"


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _keys() -> ApiKeys:
    return ApiKeys(
        {
            key_digest(ALICE): Principal("alice"),
            key_digest(BOB): Principal("bob"),
            key_digest(ROOT): Principal("root", frozenset({"admin"})),
        }
    )


def _call(name: str, **input: Any) -> Message:
    return Message(sender="agent", tool_calls=[ToolCall(id="c1", name=name, input=input)])


def _asking(owners: list[str]) -> Any:
    """Each session asks permission to deploy, then says it is done; ``owners`` records
    ``session_owner()`` as the factory saw it."""

    def build(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        owners.append(session_owner())

        @tool(requires_permission=True)
        def deploy(target: str) -> str:
            """Deploy to a target.

            Args:
                target: where to deploy.
            """
            return f"deployed to {target}"

        glove = Glove(
            model=ScriptedModel([_call("deploy", target="prod"), "all done", "again"]),
            system_prompt="headless",
            store=store,
        )
        glove.fold(deploy)
        return glove

    return build


@asynccontextmanager
async def _server(
    tmp_path: Path, database: str | None, **options: Any
) -> AsyncIterator[tuple[HeadlessServer, httpx2.AsyncClient]]:
    owners: list[str] = options.pop("owners", [])
    server = HeadlessServer(
        None if database else str(tmp_path / "s.db"),
        None,
        options.pop("factory", _asking(owners)),
        authenticator=_keys(),
        database_url=database,
        **options,
    )
    async with running(server) as client:
        client.headers.pop("Authorization")
        yield server, client


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> str | None:
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


async def test_each_principal_sees_follows_answers_and_deletes_only_its_own(
    tmp_path: Path, database: str | None
) -> None:
    owners: list[str] = []
    async with _server(tmp_path, database, owners=owners) as (_, client):
        a, b = _auth(ALICE), _auth(BOB)
        assert (await client.post("/sessions", json={"id": "a1"}, headers=a)).status_code == 201
        assert (await client.post("/sessions", json={"id": "b1"}, headers=b)).status_code == 201
        assert owners == ["alice", "bob"]
        # Another's id is taken, whoever asks; creating it again is a 409 for everyone.
        assert (await client.post("/sessions", json={"id": "a1"}, headers=b)).status_code == 409
        mine = (await client.get("/sessions", headers=a)).json()["sessions"]
        assert [(s["id"], s["owner"]) for s in mine] == [("a1", "alice")]
        assert [s["id"] for s in (await client.get("/sessions", headers=b)).json()["sessions"]] == [
            "b1"
        ]
        assert (await client.get("/principal", headers=b)).json() == {
            "principal": "bob",
            "scopes": [],
        }
        # Bob, on Alice's session: every route answers as for an unknown id.
        unknown = {"error": "no session 'a1'"}
        event = {"id": "e1", "source": "ci", "kind": "k", "content": "c"}
        for method, path, body in [
            ("GET", "/sessions/a1", None),
            ("POST", "/sessions/a1/messages", {"text": "hi"}),
            ("POST", "/sessions/a1/events", event),
            ("GET", "/sessions/a1/events", None),
            ("GET", "/sessions/a1/slots", None),
            ("POST", "/sessions/a1/slots/slot_x", {"value": True}),
            ("DELETE", "/sessions/a1", None),
        ]:
            reply = await client.request(method, path, json=body, headers=b)
            assert reply.status_code == 404 and reply.json() == unknown, (method, path, reply.text)
            nobody = await client.request(method, path.replace("a1", "zz"), json=body, headers=b)
            assert nobody.status_code == 404, (method, path)
        # Alice's own session works: a turn asks her permission; Bob cannot answer it.
        client.headers.update(a)
        async with follow(client, "a1") as stream:
            turn = asyncio.create_task(client.post("/sessions/a1/messages", json={"text": "go"}))
            shown = await stream.until(lambda i: i.name == "slots" and bool(i.data["slots"]))
            slot = shown[-1].data["slots"][0]
            url = f"/sessions/a1/slots/{slot['id']}"
            assert (await client.post(url, json={"value": True}, headers=b)).status_code == 404
            assert (await client.get("/sessions/a1/slots", headers=b)).status_code == 404
            assert (await client.post(url, json={"value": True})).status_code == 200
            await stream.until(lambda i: i.name == "tool_result")
        assert sse_events((await turn).text)[-1][1]["text"] == "all done"
        # Only Alice deletes it.
        assert (await client.delete("/sessions/a1", headers=b)).status_code == 404
        assert (await client.delete("/sessions/a1")).status_code == 204
        assert (await client.get("/sessions/b1", headers=b)).status_code == 200


async def test_an_admin_lists_and_reads_every_session_but_changes_none(
    tmp_path: Path, database: str | None
) -> None:
    async with _server(tmp_path, database) as (_, client):
        a, root = _auth(ALICE), _auth(ROOT)
        await client.post("/sessions", json={"id": "a1"}, headers=a)
        await client.post("/sessions", json={"id": "b1"}, headers=_auth(BOB))
        await client.post("/sessions", json={"id": "r1"}, headers=root)
        listed = (await client.get("/sessions", headers=root)).json()["sessions"]
        assert [(s["id"], s["owner"]) for s in listed] == [
            ("a1", "alice"),
            ("b1", "bob"),
            ("r1", "root"),
        ]
        assert (await client.get("/sessions/a1", headers=root)).json()["messages"] == []
        assert (await client.get("/sessions/a1/slots", headers=root)).status_code == 200
        client.headers.update(root)
        async with follow(client, "a1"):
            pass
        for method, path, body in [
            ("POST", "/sessions/a1/messages", {"text": "hi"}),
            ("DELETE", "/sessions/a1", None),
        ]:
            reply = await client.request(method, path, json=body)
            assert reply.status_code == 404, (method, path)
        # The admin's own list page is every session; Alice's is hers.
        assert len((await client.get("/sessions", headers=a)).json()["sessions"]) == 1


async def test_sessions_from_before_principals_belong_to_default(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    old = SqliteStore(path, "legacy")
    await old.append_messages([Message(sender="user", text="from before")])
    await old.aclose()
    key = "the-default-key-0123456789"
    server = HeadlessServer(str(path), key, _asking([]), authenticator=_keys())
    async with running(server) as client:
        client.headers.update(_auth(key))
        listed = (await client.get("/sessions")).json()["sessions"]
        assert [(s["id"], s["owner"]) for s in listed] == [("legacy", "default")]
        assert (await client.get("/sessions/legacy")).status_code == 200
        assert (await client.get("/sessions/legacy", headers=_auth(ALICE))).status_code == 404
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT session_id, principal FROM glove_session_owners").fetchall()
        versions = dict(conn.execute("SELECT component, version FROM glove_store_schema"))
        counts = conn.execute("SELECT principal, sessions FROM glove_principal_sessions").fetchall()
    assert rows == [("legacy", "default")]
    assert counts == [("default", 1)]  # the cap counts sessions from before principals
    assert versions["glove_mcp.session_owners"] == 1


async def test_failed_authentication_is_throttled_per_address_only(tmp_path: Path) -> None:
    throttle = FailureThrottle(burst=5, per_second=0.01)
    async with _server(tmp_path, None, throttle=throttle) as (_, client):
        for _ in range(5):
            assert (await client.get("/sessions", headers=_auth("x" * 24))).status_code == 401
        refused = await client.get("/sessions", headers=_auth("y" * 24))
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        # The address waits even with a right key: a right guess looks like a wrong one.
        assert (await client.get("/sessions", headers=_auth(ALICE))).status_code == 429
        assert "x" * 24 not in refused.text
        # Another address is not slowed: the throttle counts addresses, not keys.
        assert throttle.retry_after("10.0.0.9") is None
        assert list(throttle.addresses()) == ["127.0.0.1"]


async def test_valid_keys_are_never_counted_as_failures(tmp_path: Path) -> None:
    throttle = FailureThrottle(burst=2, per_second=0.01)
    async with _server(tmp_path, None, throttle=throttle) as (_, client):
        for _ in range(20):
            assert (await client.get("/sessions", headers=_auth(ALICE))).status_code == 200
        assert list(throttle.addresses()) == []


async def test_sessions_per_principal_are_capped(tmp_path: Path, database: str | None) -> None:
    async with _server(tmp_path, database, max_sessions_per_principal=2) as (_, client):
        a = _auth(ALICE)
        for name in ("a1", "a2"):
            assert (await client.post("/sessions", json={"id": name}, headers=a)).status_code == 201
        full = await client.post("/sessions", json={"id": "a3"}, headers=a)
        assert full.status_code == 429 and full.headers["Retry-After"] == "60"
        assert "has 2 sessions, the most it may have" in full.json()["error"]
        # Another principal is not held back by Alice's count; a taken id stays a 409.
        assert (await client.post("/sessions", json={"id": "b1"}, headers=_auth(BOB))).is_success
        assert (await client.post("/sessions", json={"id": "b1"}, headers=a)).status_code == 409
        assert (await client.delete("/sessions/a1", headers=a)).status_code == 204
        assert (await client.post("/sessions", json={"id": "a3"}, headers=a)).status_code == 201


def _queued(db: Path) -> Any:
    def build(session_id: str, store: SessionStore, stack: AsyncExitStack) -> Glove:
        queue = SqliteEventQueue(db, session_id, check_pages=False)
        stack.push_async_callback(queue.aclose)
        return Glove(
            model=ScriptedModel(["ok"] * 5),
            system_prompt="headless",
            store=store,
            server_mode=True,
            events=EventsConfig(queue=queue),
        )

    return build


async def test_pending_events_are_capped_for_every_session_together(tmp_path: Path) -> None:
    factory = _queued(tmp_path / "s.db")
    async with _server(tmp_path, None, factory=factory, max_pending_events=3) as (_, client):
        client.headers.update(_auth(ALICE))
        answers = []
        for index in range(5):
            sid = f"s{index}"
            await client.post("/sessions", json={"id": sid})
            event = {"id": "e", "source": "ci", "kind": "k", "content": "c", "when_idle": "defer"}
            answers.append(await client.post(f"/sessions/{sid}/events", json=event))
        assert [a.status_code for a in answers] == [200, 200, 200, 503, 503]
        assert answers[-1].headers["Retry-After"] == "5"
        assert "pending outside events" in answers[-1].json()["error"]


async def test_added_routes_are_authenticated_unless_public(tmp_path: Path) -> None:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    async def who(request: Request) -> Response:
        principal = request.state.principal
        return JSONResponse({"principal": principal.name if principal else None})

    async def broken(request: Request) -> Response:
        raise RuntimeError("a bug")

    server = HeadlessServer(str(tmp_path / "s.db"), None, _asking([]), authenticator=_keys())
    server.add_route("/oauth/callback", who, methods=["GET"], public=True)
    server.add_route("/connections", who, methods=["GET"])
    server.add_route("/broken", broken, methods=["GET"], public=True)
    async with running(server) as client:
        client.headers.pop("Authorization")
        callback = await client.get("/oauth/callback", params={"state": "s", "code": "c"})
        assert callback.status_code == 200 and callback.json() == {"principal": None}
        assert (await client.get("/connections")).status_code == 401
        mine = await client.get("/connections", headers=_auth(BOB))
        assert mine.json() == {"principal": "bob"}
        crashed = await client.get("/broken")
        assert crashed.status_code == 500 and "a bug" not in crashed.text
