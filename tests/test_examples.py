"""Every example runs, as a subprocess, against the local servers instead of the hosted ones."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx2

from glove_mcp.cli.demo_stack import _browse
from glove_mcp.resource_keys import credential_key
from glove_mcp.testing import serve, serve_oauth_server
from glove_mcp.testing.servers import build_tracker_server

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    values.update(GLOVE_HOME=str(tmp_path), PYTHONUNBUFFERED="1", **extra)
    return values


def script(tmp_path: Path, replies: list[Any]) -> str:
    path = tmp_path / f"script-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(replies))
    return str(path)


async def run(
    name: str, environment: dict[str, str], *args: str, stdin: bytes = b""
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / name),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 90)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_notion_agent_against_the_local_notes_server(tmp_path: Path) -> None:
    async with serve("notes") as url:
        replies = [
            {"tool_calls": [{"name": "notion__search_pages", "input": {"query": "onboarding"}}]},
            "Found it.",
        ]
        status, out, err = await run(
            "notion_agent.py",
            env(tmp_path, GLOVE_NOTION_MCP_URL=url, GLOVE_SCRIPT=script(tmp_path, replies)),
            "find the onboarding page",
        )
    assert status == 0, err
    assert "→ notion__search_pages" in out and "← notion__search_pages: success" in out
    assert out.strip().endswith("Found it.")


async def test_login_script_then_agent_with_the_stored_token(tmp_path: Path) -> None:
    async with serve_oauth_server(build_tracker_server) as server:
        environment = env(tmp_path, GLOVE_LINEAR_MCP_URL=server.url, GLOVE_OAUTH_PORT="0")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(EXAMPLES / "linear_mcp_auth.py"),
            "--no-browser",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        assert process.stderr is not None and process.stdout is not None
        url = None
        while url is None:
            line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
            assert line, "the login script never printed its URL"
            found = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S+)", line)
            url = found.group(1) if found else None
        await _browse(url)
        out = (await asyncio.wait_for(process.stdout.read(), 60)).decode()
        assert await process.wait() == 0
        assert "linear: AUTHORIZED (4 tools)" in out

        replies = [{"tool_calls": [{"name": "linear__list_issues", "input": {}}]}, "ENG-1."]
        environment["GLOVE_SCRIPT"] = script(tmp_path, replies)
        status, out, err = await run("linear_agent.py", environment, "what is open?")
        assert status == 0, err
        assert "← linear__list_issues: success" in out  # the server checked the stored token


async def test_multi_mcp_cli_discovers_and_uses_a_server(tmp_path: Path) -> None:
    async with serve("notes") as notes, serve("tracker") as tracker:
        replies = [
            {"tool_calls": [{"name": "find_capability", "input": {"need": "issue tracker"}}]},
            {"tool_calls": [{"name": "activate", "input": {"id": "linear"}}]},
            "Activated Linear.",
            {"tool_calls": [{"name": "linear__list_issues", "input": {}}]},
            "One issue is open.",
        ]
        status, out, err = await run(
            "multi_mcp_cli.py",
            env(
                tmp_path,
                GLOVE_NOTION_MCP_URL=notes,
                GLOVE_LINEAR_MCP_URL=tracker,
                GLOVE_SCRIPT=script(tmp_path, replies),
            ),
            stdin=b"what is open in the tracker?\n/quit\n",
        )
    assert status == 0, err
    assert "→ find_capability" in out and "← linear__list_issues: success" in out
    assert "active servers at the end: linear" in out


async def test_headless_server_example(tmp_path: Path) -> None:
    status, _, err = await run("headless_server.py", env(tmp_path, PORT="0"))
    assert status != 0 and "API key" in err

    async with serve("tracker") as tracker:
        replies = [{"tool_calls": [{"name": "linear__list_issues", "input": {}}]}, "ENG-1."]
        environment = env(
            tmp_path,
            PORT="0",
            GLOVE_API_KEY="example-key-0123456789abc",
            GLOVE_LINEAR_MCP_URL=tracker,
            GLOVE_DB=str(tmp_path / "agents.db"),
            GLOVE_SCRIPT=script(tmp_path, replies),
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(EXAMPLES / "headless_server.py"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        try:
            assert process.stdout is not None
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            base = line.split("serving on ")[1].strip()
            headers = {"Authorization": "Bearer example-key-0123456789abc"}
            async with httpx2.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
                session = (await client.post("/sessions")).json()["id"]
                reply = await client.post(
                    f"/sessions/{session}/messages", json={"text": "what is open?"}
                )
                assert "event: tool_result" in reply.text and '"status": "success"' in reply.text
                assert 'event: final\ndata: {"text": "ENG-1."' in reply.text
        finally:
            process.terminate()
            await process.wait()


# -- the three short programs: a login, a terminal agent, a server with its page ----------------

SHORT = ("login.py", "agent.py", "web_server.py")


def test_the_short_programs_are_short() -> None:
    for name in SHORT:
        source = (EXAMPLES / name).read_text(encoding="utf-8")
        assert len(source.splitlines()) <= 10, name
        imported = [
            alias.name
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        ]
        assert len(imported) <= 4, (name, imported)


async def test_login_then_the_agent_uses_and_keeps_the_stored_tokens(tmp_path: Path) -> None:
    async with serve_oauth_server(build_tracker_server) as server:
        (tmp_path / "servers.toml").write_text(
            '[[servers]]\nid = "linear"\nname = "Linear"\n'
            'description = "Issues, projects and cycles."\n'
            f'url = "{server.url}"\ntags = ["issues"]\n',
            encoding="utf-8",
        )
        environment = env(tmp_path)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(EXAMPLES / "login.py"),
            "linear",
            "--no-browser",
            "--port",
            "0",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        assert process.stderr is not None and process.stdout is not None
        url = None
        while url is None:
            line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
            assert line, "the login never printed its URL"
            found = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S+)", line)
            url = found.group(1) if found else None
        await _browse(url)
        out = (await asyncio.wait_for(process.stdout.read(), 60)).decode()
        assert await process.wait() == 0
        assert "linear: AUTHORIZED" in out
        # The library's default file, the login under the server it was issued for.
        stored = (tmp_path / "oauth.json").read_text()
        assert credential_key("default", server.url) in stored

        replies = [
            {"tool_calls": [{"name": "find_capability", "input": {"need": "issue tracker"}}]},
            {"tool_calls": [{"name": "activate", "input": {"id": "linear"}}]},
            "Activated Linear.",
            {"tool_calls": [{"name": "linear__list_issues", "input": {}}]},
            "ENG-1 is open.",
        ]
        status, out, err = await run(
            "agent.py",
            environment,
            "--session",
            "s1",
            "--new",
            "--script",
            script(tmp_path, replies),
            stdin=b"what is open in the tracker?\n/quit\n",
        )
        assert status == 0, err
        assert "linear__list_issues" in out and "ENG-1 is open." in out
        assert "error" not in out.split("linear__list_issues", 2)[-1].split("\n", 1)[0]
        # Durable: the conversation is in the default SQLite file; the server stays active.
        assert (tmp_path / "chat.db").exists()
        status, out, err = await run(
            "agent.py",
            environment,
            "--session",
            "s1",
            "--script",
            script(tmp_path, ["Still here."]),
            stdin=b"/quit\n",
        )
        assert status == 0, err
        assert "active servers: linear" in out


async def test_the_web_server_program_serves_the_page_and_a_session(tmp_path: Path) -> None:
    async with serve("tracker") as tracker:
        (tmp_path / "servers.toml").write_text(
            '[[servers]]\nid = "linear"\nname = "Linear"\ndescription = "Issues."\n'
            f'url = "{tracker}"\n',
            encoding="utf-8",
        )
        replies: list[Any] = [
            {"tool_calls": [{"name": "find_capability", "input": {"need": "issues"}}]}
        ]
        replies += ["Nothing found."]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(EXAMPLES / "web_server.py"),
            "--port",
            "0",
            "--script",
            script(tmp_path, replies),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env(tmp_path, GLOVE_API_KEY="k" * 32),
        )
        try:
            assert process.stdout is not None
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            assert "chat page at /" in line, line
            base = re.search(r"(http://\S+)", line).group(1)  # type: ignore[union-attr]
            headers = {"Authorization": "Bearer " + "k" * 32}
            async with httpx2.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
                page = await client.get("/")
                assert page.status_code == 200 and "text/html" in page.headers["content-type"]
                session = (await client.post("/sessions")).json()["id"]
                reply = await client.post(f"/sessions/{session}/messages", json={"text": "hi"})
                assert "find_capability" in reply.text
            assert (tmp_path / "server.db").exists()  # sessions in the default SQLite file
        finally:
            process.terminate()
            await process.wait()
