"""The glove-mcp command against local servers: as a real subprocess where the process is
part of what is tested (the entry point, signals, a login a browser finishes), in-process
(``main``) where its messages, files and exit status are."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from glove_core import ScriptedModel
from glove_core.resources import AsyncResource
from glove_mcp.cli import main
from glove_mcp.cli.demo_stack import _browse
from glove_mcp.testing import OAuthTestServer, serve, serve_oauth_server
from glove_mcp.testing.servers import build_tracker_server
from tests.glove_mcp.cli._commands import Servers, in_process


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["GLOVE_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    return env


async def run_cli(
    *args: str, home: Path, stdin: bytes = b"", limit: float = 60
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "glove_mcp.cli",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(home),
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), limit)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def write_catalogue(path: Path, **urls: str) -> Path:
    lines = []
    for server_id, url in urls.items():
        lines += [
            "[[servers]]",
            f'id = "{server_id}"',
            f'name = "{server_id.title()}"',
            f'description = "The {server_id} server: issues, tickets and bugs."',
            f'url = "{url}"',
            'tags = ["issues"]',
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture
async def protected() -> AsyncIterator[OAuthTestServer]:
    async with serve_oauth_server(build_tracker_server) as server:
        yield server


async def test_demo_runs_offline_and_shows_discovery_and_tools(tmp_path: Path) -> None:
    status, out, err = await run_cli("demo", home=tmp_path, limit=120)
    assert status == 0, err
    assert "OFFLINE" in out
    assert "AUTHORIZED" in out
    assert "→ activate" in out and "tracker__list_issues" in out
    assert "← tracker__create_issue" in out
    assert "I filed ENG-2" in out


async def test_help_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = await run_cli("--help", home=tmp_path)  # the real entry point, once
    assert status == 0 and "usage: glove-mcp" in out
    for command in (["demo"], ["auth"], ["status"], ["logout"], ["chat"], ["serve"]):
        with pytest.raises(SystemExit) as exited:
            main([*command, "--help"])
        assert exited.value.code == 0
        assert f"usage: glove-mcp {command[0]}" in capsys.readouterr().out


async def test_auth_status_logout_with_a_simulated_browser(
    tmp_path: Path, protected: OAuthTestServer
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=protected.url)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "glove_mcp.cli",
        "auth",
        "tracker",
        "--no-browser",
        "--port",
        "0",
        "--catalogue",
        str(catalogue),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(tmp_path),
    )
    assert process.stderr is not None and process.stdout is not None
    url = None
    while url is None:
        line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert line, "the login never printed its URL"
        found = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S+)", line)
        url = found.group(1) if found else None
    await _browse(url)  # the user opens the URL; the redirect reaches the CLI's listener
    out = (await asyncio.wait_for(process.stdout.read(), 60)).decode()
    assert await process.wait() == 0
    assert "tracker: AUTHORIZED" in out
    stored = json.loads((tmp_path / "oauth.json").read_text())
    assert list(stored["entries"]) == [f"default@{protected.url}"]  # principal and resource
    assert oct((tmp_path / "oauth.json").stat().st_mode & 0o777) == "0o600"

    status, out, _ = await run_cli("status", "--catalogue", str(catalogue), home=tmp_path)
    assert status == 0 and re.search(r"tracker\s+logged in\s+expires in", out)
    status, out, _ = await run_cli(
        "logout", "tracker", "--catalogue", str(catalogue), home=tmp_path
    )
    assert status == 0 and "logged out" in out
    status, out, _ = await run_cli("status", "--catalogue", str(catalogue), home=tmp_path)
    assert "not logged in" in out and "glove-mcp auth tracker" in out


def test_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLOVE_HOME", str(tmp_path))
    monkeypatch.delenv("GLOVE_API_KEY", raising=False)
    assert main(["chat"]) == 2
    assert capsys.readouterr().err == (
        "glove-mcp: no model: set ANTHROPIC_API_KEY (or pass --script FILE for an offline "
        "scripted model)\n"
    )
    assert main(["auth", "nope"]) == 2
    assert "no server 'nope' in the catalogue (known: notion, linear)" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[[servers]]\nid = 'x'\n")
    assert main(["status", "--catalogue", str(bad)]) == 2  # a configuration error
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "server #1" in err
    assert main(["status", "--catalogue", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    # A damaged token file: status leaves its fast reader for the store, which names it.
    (tmp_path / "oauth.json").write_text("{not json")
    assert main(["status"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "oauth.json" in err and "corrupt" in err
    (tmp_path / "oauth.json").write_text(
        '{"format": "glove-mcp-oauth", "version": 1, "entries": {"notion": "garbage"}}'
    )
    assert main(["status"]) == 1
    assert "corrupt" in capsys.readouterr().err
    (tmp_path / "oauth.json").unlink()
    assert main(["status"]) == 0
    assert "notion           not logged in" in capsys.readouterr().out
    assert main(["serve"]) == 2
    assert "refusing to start without a way to authenticate clients" in capsys.readouterr().err
    assert main(["auth", "notion", "--client-secret-env", "X"]) == 2
    assert "--client-secret-env needs --client-id" in capsys.readouterr().err
    monkeypatch.delenv("NO_SUCH_SECRET", raising=False)
    assert (
        main(["auth", "notion", "--client-id", "c", "--client-secret-env", "NO_SUCH_SECRET"]) == 2
    )
    assert "$NO_SUCH_SECRET is not set" in capsys.readouterr().err
    assert main(["chat", "--script", str(tmp_path / "missing.json")]) == 2
    assert "cannot read script" in capsys.readouterr().err


def test_chat_through_stdin_with_a_scripted_model_and_resume(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.open)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "find_capability", "input": {"need": "bug tracker"}}]},
                {"tool_calls": [{"name": "activate", "input": {"id": "tracker"}}]},
                "Activated.",
                {"tool_calls": [{"name": "tracker__list_issues", "input": {}}]},
                "One open issue: ENG-1.",
            ]
        )
    )
    common = [
        "--catalogue",
        str(catalogue),
        "--script",
        str(script),
        "--db",
        str(tmp_path / "chat.db"),
        "--server-mode",
    ]
    ran = in_process(
        "chat",
        "--session",
        "s1",
        "--new",
        *common,
        home=tmp_path,
        stdin="what is open?\n/quit\n",
        capsys=capsys,
    )
    assert ran.status == 0, ran.err
    assert "session s1" in ran.out
    assert "← tracker__list_issues" in ran.out and "One open issue: ENG-1." in ran.out

    script.write_text(json.dumps(["Still one: ENG-1."]))
    ran = in_process(
        "chat", "--session", "s1", *common, home=tmp_path, stdin="and now?\n", capsys=capsys
    )
    assert ran.status == 0, ran.err
    assert "active servers: tracker" in ran.out  # restored from the SQLite adapter
    assert "Still one: ENG-1." in ran.out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
async def test_ctrl_c_aborts_the_request_and_keeps_the_conversation(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"latency": 30, "replies": ["too slow"]}))
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "glove_mcp.cli",
        "chat",
        "--session",
        "c1",
        "--new",
        "--script",
        str(script),
        "--catalogue",
        str(catalogue),
        "--db",
        str(tmp_path / "chat.db"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=cli_env(tmp_path),
    )
    assert process.stdin is not None and process.stdout is not None
    buffer = b""
    while b"you> " not in buffer:
        buffer += await asyncio.wait_for(process.stdout.read(64), 60)
    process.stdin.write(b"hello\n")
    await process.stdin.drain()
    buffer = b""
    while buffer.count(b"you> ") < 1:  # the prompt returns only after the request ends
        try:
            buffer += await asyncio.wait_for(process.stdout.read(64), 0.5)
        except TimeoutError:
            process.send_signal(signal.SIGINT)
    process.stdin.write(b"/quit\n")
    await process.stdin.drain()
    rest, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    assert b"(aborted; the conversation is kept)" in buffer + rest
    from glove_core import SqliteStore

    async with SqliteStore(tmp_path / "chat.db", "c1") as store:
        assert [m.text for m in await store.get_messages()] == ["hello"]


async def test_demo_with_a_key_uses_claude_then_stays_interactive(tmp_path: Path) -> None:
    from glove_core.testing import FakeReply, FakeToolUse, serve_fake_anthropic

    async with serve_fake_anthropic() as fake:
        fake.script(
            FakeReply(("Let me look.", FakeToolUse("find_capability", {"need": "bug tracker"}))),
            FakeReply((FakeToolUse("activate", {"id": "tracker"}),)),
            FakeReply(("Activated the tracker.",)),
            FakeReply((FakeToolUse("tracker__list_issues", {"state": "open"}),)),
            FakeReply(("ENG-1 is open.",)),
            FakeReply(("Anything else?",)),
        )
        environment = cli_env(tmp_path)
        environment.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "glove_mcp.cli",
            "demo",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        out, err = await asyncio.wait_for(process.communicate(b"thanks\n/quit\n"), 120)
    text = out.decode()
    assert process.returncode == 0, err.decode()
    assert "Claude plays the agent" in text and "OFFLINE" not in text
    assert "← tracker__list_issues" in text and "ENG-1 is open." in text
    assert "Anything else?" in text  # the interactive turn after the scripted question
    assert "test-key" not in text + err.decode()


async def test_serve_runs_a_headless_server(tmp_path: Path) -> None:
    import httpx2

    async with serve("tracker") as url:
        catalogue = write_catalogue(tmp_path / "servers.toml", tracker=url)
        script = tmp_path / "script.json"
        script.write_text(json.dumps(["Hello from the server."]))
        environment = cli_env(tmp_path)
        environment["GLOVE_API_KEY"] = "test-key-for-serve-0123456789"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "glove_mcp.cli",
            "serve",
            "--port",
            "0",
            "--script",
            str(script),
            "--catalogue",
            str(catalogue),
            "--db",
            str(tmp_path / "s.db"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        try:
            assert process.stdout is not None
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            base = re.search(r"(http://\S+)", line)
            assert base is not None, line
            async with httpx2.AsyncClient(
                base_url=base.group(1),
                headers={"Authorization": "Bearer test-key-for-serve-0123456789"},
                timeout=30,
            ) as client:
                session = (await client.post("/sessions")).json()["id"]
                reply = await client.post(f"/sessions/{session}/messages", json={"text": "hi"})
                assert 'event: final\ndata: {"text": "Hello from the server."' in reply.text
            async with httpx2.AsyncClient(base_url=base.group(1), timeout=30) as anonymous:
                assert (await anonymous.get(f"/sessions/{session}")).status_code == 401
        finally:
            process.terminate()
            await process.wait()


def test_a_failed_login_is_one_line_in_flag_language_and_stores_nothing(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    args = ["auth", "tracker", "--no-browser", "--port", "0", "--catalogue", str(catalogue)]
    # Pasted garbage: the code exchange fails.
    ran = in_process(*args, home=tmp_path, stdin="not a code\n", capsys=capsys)
    status, out, err = ran.status, ran.out, ran.err
    assert status == 1 and "AUTHORIZED" not in out
    [line] = [text for text in err.splitlines() if text.startswith("glove-mcp:")]
    assert line.startswith("glove-mcp: tracker: OAuth login for 'tracker' at ")
    assert "invalid_grant" in line
    assert "Traceback" not in err and "ExceptionGroup" not in err
    stored = tmp_path / "oauth.json"
    assert not stored.exists() or "tracker" not in stored.read_text()
    # No approval in time: the advice names the command's flags.
    ran = in_process(*args, "--timeout", "0.5", home=tmp_path, capsys=capsys)
    status, err = ran.status, ran.err
    assert status == 1
    assert "within 0.5 s" in err and "--timeout SECONDS" in err and "--no-browser" in err
    assert "Traceback" not in err


class ClosableScript(ScriptedModel, AsyncResource):
    """A scripted model with an HTTP client to close, as ``AnthropicModel`` has."""

    closed = 0

    async def aclose(self) -> None:
        ClosableScript.closed += 1


def test_chat_closes_its_model_when_it_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command builds one model and must close it (its HTTP client's socket otherwise
    # stays open until the process ends).
    monkeypatch.setattr(
        "glove_mcp.cli.agent._model", lambda args, progress: ClosableScript(["hello"])
    )
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    ClosableScript.closed = 0
    ran = in_process(
        "chat",
        "--catalogue",
        str(catalogue),
        home=tmp_path,
        stdin="hi\n",
        capsys=capsys,
        env={"ANTHROPIC_API_KEY": "unused"},  # the check before the model is built
    )
    assert ran.status == 0, ran.err
    assert "hello" in ran.out
    assert ClosableScript.closed == 1
