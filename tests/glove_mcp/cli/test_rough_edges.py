"""Issue 21, item 9: Ctrl-C during start-up is one line and exit status 130; Ctrl-C at the
idle prompt shows a fresh prompt (Ctrl-D leaves); ``logout`` without tokens says there was
nothing to delete; ``status`` never says "expires in 0 min"; ``chat.db`` is private like
``oauth.json``; the resume hint is shell-quoted and runs as printed; a callback port in use
suggests ``--port``; ``demo --offline`` with a key set says why it is offline."""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import socket
import time
from pathlib import Path

import pytest

from glove_mcp.adapter import SqliteMcpAdapter
from tests.glove_mcp.cli._commands import (
    Servers,
    in_process,
    run_cli,
    serving,
    start_cli,
    write_catalogue,
)


async def _read_until(stream: asyncio.StreamReader, marker: bytes, seen: bytes = b"") -> bytes:
    while marker not in seen:
        chunk = await asyncio.wait_for(stream.read(256), 60)
        assert chunk, f"ended before {marker!r}: {seen.decode(errors='replace')}"
        seen += chunk
    return seen


async def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hi"]))
    # While the command imports its modules (a new conversation's prompt comes before them,
    # and Ctrl-C there redraws it: `-p` imports first).
    process = await start_cli("chat", "-p", "hi", "--script", str(script), home=tmp_path)
    await asyncio.sleep(0.3)
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 130, err.decode()
    assert err.decode().strip() == "interrupted" and b"you>" not in out

    # While it connects to a server the conversation had active (a slow one).
    with serving(("tracker", "--connect-latency", "30")) as [url]:
        catalogue = write_catalogue(tmp_path / "servers.toml", slow=url)
        db = tmp_path / "chat.db"
        adapter = SqliteMcpAdapter(db, "s1")
        await adapter.activate("slow")
        await adapter.aclose()
        process = await start_cli(
            "chat",
            "--session",
            "s1",
            "--new",
            "--db",
            str(db),
            "--script",
            str(script),
            "--catalogue",
            str(catalogue),
            home=tmp_path,
        )
        assert process.stdout is not None
        await _read_until(process.stdout, b"session s1")
        await asyncio.sleep(0.5)
        process.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 130, err.decode()
    assert err.decode().strip() == "interrupted", err.decode()
    assert b"you>" not in out


async def test_ctrl_c_at_the_prompt_shows_a_fresh_one(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["Still here."]))
    catalogue = write_catalogue(tmp_path / "servers.toml", x="http://127.0.0.1:9/mcp")
    process = await start_cli(
        "chat", "--script", str(script), "--catalogue", str(catalogue), home=tmp_path
    )
    assert process.stdout is not None and process.stdin is not None
    seen = await _read_until(process.stdout, b"you> ")
    process.send_signal(signal.SIGINT)
    seen = await _read_until(process.stdout, b"(Ctrl-D or /quit to leave)\nyou> ", seen)
    process.stdin.write(b"hello\n")
    await process.stdin.drain()
    seen = await _read_until(process.stdout, b"Still here.", seen)
    process.stdin.close()  # Ctrl-D
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert "Traceback" not in err.decode()


def test_logout_without_tokens_and_status_near_expiry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = in_process("logout", "notion", home=tmp_path, capsys=capsys)
    assert ran.status == 0
    assert ran.out.strip() == "notion: not logged in: there were no tokens to delete"
    ran = in_process("logout", "notion", "--local-only", home=tmp_path, capsys=capsys)
    assert "there were no tokens to delete" in ran.out
    assert not (tmp_path / "oauth.json").exists()

    now = time.time()

    def login(expires_at: float, url: str) -> dict[str, object]:
        tokens = {"access_token": "a", "token_type": "Bearer", "expires_at": expires_at}
        return {"server_url": url, "tokens": tokens}

    document = {
        "format": "glove-mcp-oauth",
        "version": 1,
        "entries": {  # written by an older glove: keyed by id, bound by their server_url
            "notion": login(now + 30, "https://mcp.notion.com/mcp"),
            "linear": login(now - 5, "https://mcp.linear.app/mcp"),
        },
    }
    (tmp_path / "oauth.json").write_text(json.dumps(document))
    ran = run_cli("status", home=tmp_path)
    lines = dict(line.split(None, 1) for line in ran.out.splitlines())
    assert "expires in under a minute" in lines["notion"]
    assert "expired less than a minute ago" in lines["linear"]
    assert "0 min" not in ran.out


def test_chat_db_is_private_and_the_resume_hint_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["First.", "Second."]))
    catalogue = write_catalogue(tmp_path / "my servers.toml", x="http://127.0.0.1:9/mcp")
    ran = in_process(
        "chat",
        "--session",
        "my chat; rm -rf ~",
        "--new",
        "--script",
        str(script),
        "--catalogue",
        str(catalogue),
        home=tmp_path,
        stdin="one\n",
        capsys=capsys,
    )
    assert ran.status == 0, ran.err
    assert oct((tmp_path / "chat.db").stat().st_mode & 0o777) == "0o600"
    hint = ran.out.splitlines()[0].split("(resume with: ", 1)[1].rstrip(")")
    words = shlex.split(hint)
    assert words[:4] == ["glove-mcp", "chat", "--session", "my chat; rm -rf ~"]
    assert words[4:] == ["--catalogue", str(catalogue)]
    script.write_text(json.dumps(["Resumed."]))
    # The hint's words as a shell splits them, after the command's name: its argv.
    ran = in_process(
        *words[1:], "--script", str(script), home=tmp_path, stdin="two\n", capsys=capsys
    )
    assert ran.status == 0 and "Resumed." in ran.out


def test_a_callback_port_in_use_suggests_port(
    tmp_path: Path, servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker=servers.oauth)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        ran = in_process(
            "auth",
            "tracker",
            "--no-browser",
            "--port",
            port,
            "--catalogue",
            str(catalogue),
            home=tmp_path,
            capsys=capsys,
        )
    assert ran.status == 2
    [line] = ran.error_lines
    assert f"port {port} for the OAuth callback is in use" in line and "--port 0" in line
    assert "unexpected" not in line and "--debug" not in line
    assert not (tmp_path / "oauth.json").exists()


def test_demo_offline_with_a_key_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = in_process(
        "demo", "--offline", home=tmp_path, env={"ANTHROPIC_API_KEY": "sk-set"}, capsys=capsys
    )
    out = ran.out
    assert ran.status == 0, ran.err
    assert "OFFLINE (--offline given)" in out
    assert "no ANTHROPIC_API_KEY" not in out and "sk-set" not in out
