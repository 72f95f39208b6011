"""MCP Apps on the chat page over HTTP: the view loader's policy is built from the declared
origins and nothing wider, and a view's tool call is checked before it reaches the agent."""

from __future__ import annotations

from pathlib import Path

from glove_mcp.server import HeadlessServer
from glove_mcp.server._app_views import FRAME_PATH, frame_policy
from tests.glove_mcp.server._harness import KEY, running, simple_factory


def test_the_policy_allows_what_was_declared_and_nothing_else() -> None:
    default = frame_policy({})
    assert "default-src 'none'" in default and "sandbox allow-scripts" in default
    assert "connect-src 'none'" in default and "frame-src 'none'" in default
    assert "'self'" not in default.split("frame-ancestors")[0]  # not this server's API
    declared = frame_policy(
        {
            "connectDomains": ["https://api.example.com", "https://x; script-src *"],
            "resourceDomains": ["https://*.cdn.example.com", "'unsafe-eval'", "*"],
            "frameDomains": ["javascript:alert(1)"],
        }
    )
    assert "connect-src https://api.example.com;" in declared
    assert "script-src 'unsafe-inline' https://*.cdn.example.com;" in declared
    assert "unsafe-eval" not in declared and " * " not in declared and "javascript" not in declared
    assert "frame-src 'none'" in declared and declared.count("script-src") == 1


async def test_the_loader_is_served_with_its_policy_only_with_the_page(tmp_path: Path) -> None:
    off = HeadlessServer(str(tmp_path / "off.db"), KEY, simple_factory())
    async with running(off) as client:
        assert (await client.get(FRAME_PATH)).status_code == 404
        refused = await client.post("/sessions/s1/app-calls", json={"tool": "x"})
        assert refused.status_code in (404, 405)
    on = HeadlessServer(str(tmp_path / "on.db"), KEY, simple_factory(), web=True)
    async with running(on) as client:
        reply = await client.get(FRAME_PATH + "?c=https://api.example.com,https://a;b")
        assert reply.status_code == 200
        policy = reply.headers["content-security-policy"]
        assert "connect-src https://api.example.com;" in policy and "a;b" not in policy
        assert "x-frame-options" not in reply.headers
        assert "document.write" in reply.text  # the loader writes the posted view
        page = (await client.get("/")).headers["content-security-policy"]
        assert "frame-src 'self'" in page
        created = await client.post("/sessions", json={})
        session = created.json()["id"]
        path = f"/sessions/{session}/app-calls"
        for body, says in (
            ({"arguments": {}, "server": "fm"}, "'tool'"),
            ({"tool": "fm__x", "arguments": [], "server": "fm"}, "'arguments'"),
            ({"tool": "fm__x", "arguments": {}}, "'server'"),
        ):
            bad = await client.post(path, json=body)
            assert bad.status_code == 400 and says in bad.json()["error"]
        unknown = await client.post(path, json={"tool": "fm__x", "arguments": {}, "server": "fm"})
        assert unknown.status_code == 200
        assert unknown.json()["status"] == "error" and "unknown tool" in unknown.json()["message"]
