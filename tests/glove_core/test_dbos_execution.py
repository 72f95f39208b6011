"""Durable turns on DBOS (``glove_core.dbos_execution``): a process running a turn is SIGKILLed
at a chosen point and another process resumes the turn on the same PostgreSQL database.

Each process is ``tests/glove_core/_durable_turn.py``; what ran is counted in a file, what was
saved is read from the database.
"""

from __future__ import annotations

# ruff: noqa: E402 -- without the extras this module skips before its imports fail
import importlib.util
import os

import pytest

from tests._postgres import require_postgres_driver

require_postgres_driver()
if importlib.util.find_spec("dbos") is None:
    if os.environ.get("GLOVE_REQUIRE_POSTGRES") == "1":
        pytest.fail("dbos is required here (GLOVE_REQUIRE_POSTGRES=1): pip install -e '.[durable]'")
    pytest.skip(
        "needs dbos for durable turns: pip install -e '.[durable]'", allow_module_level=True
    )

import asyncio
import signal
import sys
from collections import Counter
from pathlib import Path

from glove_core import Glove, ScriptedModel
from glove_core.postgres import PostgresDatabase
from glove_core.steps import INTERRUPTED_NOT_RUN
from glove_core.stores.postgres import PostgresStore
from glove_core.types import Message

TIMEOUT = 60.0


async def start_turn(
    url: str, conversation: str, mode: str, point: str, folder: Path, turn_format: str = ""
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.glove_core._durable_turn",
        url,
        conversation,
        mode,
        point,
        str(folder),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd(), "GLOVE_TEST_TURN_FORMAT": turn_format},
    )


async def line_starting(process: asyncio.subprocess.Process, prefix: str) -> str:
    assert process.stdout is not None
    while True:
        line = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
        assert line, f"the process ended before printing {prefix!r}"
        if line.startswith(prefix):
            return line.strip()


async def killed_at(
    url: str, conversation: str, point: str, folder: Path, turn_format: str = ""
) -> None:
    """Run the turn until ``point``, then SIGKILL its process."""
    process = await start_turn(url, conversation, "run", point, folder, turn_format)
    try:
        await line_starting(process, f"AT {point}")
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()


async def resumed(url: str, conversation: str, folder: Path, point: str = "none") -> str:
    process = await start_turn(url, conversation, "resume", point, folder)
    line = await line_starting(process, "RESUMED")
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
    return line


def counts(folder: Path) -> Counter[str]:
    return Counter((folder / "counts").read_text().splitlines())


async def history(url: str, conversation: str) -> list[Message]:
    async with PostgresDatabase(url) as db:
        return await PostgresStore(db, conversation).get_messages()


def assert_valid(messages: list[Message]) -> None:
    ids = [m.id for m in messages]
    assert len(ids) == len(set(ids)), "a message was saved twice"
    for index, message in enumerate(messages):
        if message.sender == "agent" and message.tool_calls:
            answered = [r.call_id for r in messages[index + 1].tool_results or []]
            assert answered == [c.id for c in message.tool_calls], messages
    assert [m.text for m in messages if m.sender == "user" and not m.tool_results] == [
        "write the page"
    ]
    assert messages[-1].sender == "agent" and messages[-1].text == "done", messages


def results(messages: list[Message]) -> dict[str, tuple[str, str | None]]:
    return {
        r.call_id: (r.result.status, r.result.message)
        for m in messages
        for r in m.tool_results or []
    }


async def test_a_turn_killed_in_a_tool_resumes_without_running_it_again(
    postgres_url: str, tmp_path: Path
) -> None:
    await killed_at(postgres_url, "c", "tool", tmp_path)
    assert await resumed(postgres_url, "c", tmp_path) == "RESUMED 1"
    messages = await history(postgres_url, "c")
    assert_valid(messages)
    ran = counts(tmp_path)
    assert ran["write_page a"] == 1  # in flight at the crash: not run again
    assert ran["model 0"] == 1  # the recorded model call is not made again
    assert results(messages)["c1"] == ("aborted", INTERRUPTED_NOT_RUN)
    assert results(messages)["c2"] == ("success", None)


async def test_an_idempotent_call_in_flight_runs_again(postgres_url: str, tmp_path: Path) -> None:
    await killed_at(postgres_url, "c", "idempotent", tmp_path)
    await resumed(postgres_url, "c", tmp_path)
    messages = await history(postgres_url, "c")
    assert_valid(messages)
    ran = counts(tmp_path)
    assert ran["write_page a"] == 1  # finished before the crash: its result was recorded
    assert ran["read_page a"] == 2  # idempotent: run again
    assert results(messages)["c1"] == ("success", None)
    assert results(messages)["c2"] == ("success", None)


async def test_a_turn_killed_in_a_model_call_reuses_what_was_recorded(
    postgres_url: str, tmp_path: Path
) -> None:
    await killed_at(postgres_url, "c", "model", tmp_path)
    await resumed(postgres_url, "c", tmp_path)
    messages = await history(postgres_url, "c")
    assert_valid(messages)
    ran = counts(tmp_path)
    assert ran["model 0"] == 1 and ran["model 1"] == 2  # only the call in flight again
    assert ran["write_page a"] == 1 and ran["read_page a"] == 1
    assert {status for status, _ in results(messages).values()} == {"success"}


async def test_a_resumed_turn_asks_for_permission_again(postgres_url: str, tmp_path: Path) -> None:
    await killed_at(postgres_url, "c", "permission", tmp_path)
    await resumed(postgres_url, "c", tmp_path, point="permission")
    messages = await history(postgres_url, "c")
    assert_valid(messages)
    ran = counts(tmp_path)
    assert ran["asked"] == 2 and ran["publish a"] == 1
    assert results(messages)["c0"] == ("success", None)


async def test_a_finished_turn_leaves_nothing_to_resume(postgres_url: str, tmp_path: Path) -> None:
    process = await start_turn(postgres_url, "c", "run", "none", tmp_path)
    assert await line_starting(process, "FINAL") == "FINAL done"
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
    assert await resumed(postgres_url, "c", tmp_path) == "RESUMED 0"
    assert_valid(await history(postgres_url, "c"))


async def test_a_turn_recorded_in_another_format_is_never_replayed(
    postgres_url: str, tmp_path: Path
) -> None:
    await killed_at(postgres_url, "c", "tool", tmp_path, turn_format="glove-turn-0")
    assert await resumed(postgres_url, "c", tmp_path) == "RESUMED 0"
    # The next turn answers the open calls as any crashed turn's, and goes on.
    process = await start_turn(postgres_url, "c", "run", "none", tmp_path)
    assert await line_starting(process, "FINAL") == "FINAL done"
    assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
    messages = await history(postgres_url, "c")
    first = results(messages[:4])
    assert first["c1"][0] == "aborted" and first["c1"][1] != INTERRUPTED_NOT_RUN
    assert counts(tmp_path)["write_page a"] == 1  # not replayed by the other format's resume
    assert await resumed(postgres_url, "c", tmp_path) == "RESUMED 0"


async def test_a_glove_without_an_execution_has_nothing_to_resume() -> None:
    glove = Glove(model=ScriptedModel(["hi"]), system_prompt="test").build()
    assert await glove.resume_interrupted() == 0


def test_an_execution_that_is_none_is_refused() -> None:
    with pytest.raises(TypeError, match="execution must be an Execution"):
        Glove(model=ScriptedModel(["hi"]), system_prompt="test", execution=object())  # type: ignore[arg-type]
