"""``glove-mcp chat``'s conventions: slash commands (never sent to the model), ``-p``,
``--continue``, ``--session`` of an unknown id and ``--new`` — the command run in this process
with a scripted model (whose replies run out if a slash command reached it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glove_core import SqliteStore
from tests.glove_mcp.cli._commands import Ran, in_process, run_cli, write_catalogue


def chat(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    replies: list[object],
    *args: str,
    stdin: str = "",
) -> Ran:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    return in_process(
        "chat",
        "--script",
        str(script),
        "--catalogue",
        str(catalogue),
        "--db",
        str(tmp_path / "chat.db"),
        *args,
        home=tmp_path,
        stdin=stdin,
        capsys=capsys,
    )


def test_slash_commands_are_answered_by_the_chat_not_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = chat(
        tmp_path,
        capsys,
        ["Hello back.", "Slash seen."],
        stdin="/help\n/frobnicate\n/servers\n/sessions\nhello\n/sessions\n//etc/hosts?\n",
    )
    assert ran.status == 0, ran.err
    assert "/clear" in ran.out and "/sessions" in ran.out  # the help
    assert "unknown command /frobnicate: /help lists them" in ran.out
    assert "tracker  not active, no login stored" in ran.out
    assert "no saved conversations yet" in ran.out
    assert "Hello back." in ran.out
    # One reply per line sent: the slash commands used none; "//" sends "/etc/hosts?".
    assert "Slash seen." in ran.out
    (info,) = SqliteStore.list_sessions_sync(tmp_path / "chat.db")
    assert info.first_message == "hello"
    assert f"* {info.session_id}" in ran.out and "hello" in ran.out.split(info.session_id)[-1]


def test_clear_starts_a_new_conversation_and_keeps_the_old(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = chat(
        tmp_path, capsys, ["One.", "Two."], stdin="first words\n/clear\nsecond words\n/sessions\n"
    )
    assert ran.status == 0, ran.err
    sessions = SqliteStore.list_sessions_sync(tmp_path / "chat.db")
    assert [s.first_message for s in sessions] == ["first words", "second words"]
    old, new = (s.session_id for s in sessions)
    assert old != new
    assert f"(conversation {old} is kept; a new one begins)" in ran.out
    assert f"session {new} (resume with:" in ran.out


def test_an_unknown_session_is_an_error_with_a_hint_and_new_starts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = chat(tmp_path, capsys, ["Hi."], "--session", "standup", stdin="hi\n")
    assert ran.status == 2
    assert ran.error_lines == [
        "glove-mcp: no conversation 'standup' (--db "
        f"{tmp_path / 'chat.db'}): add --new to start one with that id "
        "(/sessions in the chat lists the saved ones)"
    ]
    ran = chat(tmp_path, capsys, ["Hi."], "--session", "standup", "--new", stdin="hi\n")
    assert ran.status == 0, ran.err
    ran = chat(tmp_path, capsys, ["Hi."], "--session", "standup", "--new", stdin="hi\n")
    assert ran.status == 2 and "already exists" in ran.err and "drop --new" in ran.err
    ran = chat(tmp_path, capsys, ["Again."], "--session", "standup", stdin="again\n")
    assert ran.status == 0 and "Again." in ran.out
    ran = chat(tmp_path, capsys, ["Hi."], "--new", stdin="hi\n")
    assert ran.status == 2 and "--session ID" in ran.err


def test_continue_resumes_the_last_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = chat(tmp_path, capsys, ["Hi."], "--continue")
    assert ran.status == 2
    assert "no conversation to continue" in ran.err and "glove-mcp chat" in ran.err
    chat(tmp_path, capsys, ["A."], "--session", "a", "--new", stdin="in a\n")
    chat(tmp_path, capsys, ["B."], "--session", "b", "--new", stdin="in b\n")
    chat(tmp_path, capsys, ["A again."], "--session", "a", stdin="a again\n")
    ran = chat(tmp_path, capsys, ["Continued."], "--continue", stdin="more\n")
    assert ran.status == 0, ran.err
    assert "session a (resume with:" in ran.out


def test_print_answers_once_with_stdin_as_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = chat(tmp_path, capsys, ["The answer."], "-p", "summarise", stdin="line one\nline two\n")
    assert ran.status == 0, ran.err
    assert ran.out == "The answer.\n"
    (info,) = SqliteStore.list_sessions_sync(tmp_path / "chat.db")
    assert info.first_message == "summarise\n\n<stdin>\nline one\nline two\n</stdin>"


def test_print_fails_with_a_non_zero_status(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    # A tool call and then no reply left: the request fails.
    script.write_text(json.dumps([{"tool_calls": [{"name": "nothing_here", "input": {}}]}]))
    catalogue = write_catalogue(tmp_path / "servers.toml", tracker="http://127.0.0.1:9/mcp")
    ran = run_cli(
        "chat",
        "--script",
        str(script),
        "--catalogue",
        str(catalogue),
        "-p",
        "go",
        home=tmp_path,
        timeout=60,
    )
    assert ran.status == 1, ran
    assert ran.out == ""
    assert len(ran.error_lines) == 1 and "Traceback" not in ran.err
