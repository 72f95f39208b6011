"""A process that runs (``run``) or resumes (``resume``) one durable turn, for the tests that
kill it: ``python -m tests.glove_core._durable_turn URL CONVERSATION MODE POINT FOLDER``.

The turn is: a model call asking for ``write_page`` (not idempotent) and ``read_page``
(idempotent), then a model call answering "done". Every model call and every tool run appends a
line to a file in FOLDER (the counts survive the kill). With MODE ``run`` the process stops at
POINT until killed: ``model`` (in the second model call), ``tool`` (in ``write_page``),
``idempotent`` (in ``read_page``), ``permission`` (waiting for a person to allow
``publish``, called instead of the two), ``none`` (runs to the end).

``GLOVE_TEST_TURN_FORMAT`` set: the process plays an older (or newer) version of glove that
records its turns under that format.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from glove_core import Glove, ModelRequest, ScriptedModel, ToolCall, dbos_execution, tool
from glove_core.dbos_execution import DbosExecution
from glove_core.postgres import PostgresDatabase
from glove_core.stores.postgres import PostgresStore
from glove_core.types import Message


def main(url: str, conversation: str, mode: str, point: str, folder: Path) -> None:
    hang = mode == "run"
    other_format = os.environ.get("GLOVE_TEST_TURN_FORMAT")
    if other_format:
        dbos_execution.TURN_FORMAT = other_format

    def count(what: str) -> None:
        with (folder / "counts").open("a") as file:
            file.write(what + "\n")

    async def stop_here(where: str) -> None:
        if hang and point == where:
            print(f"AT {where}", flush=True)
            await asyncio.sleep(3600)

    @tool
    async def write_page(title: str) -> str:
        """Write a page.

        Args:
            title: its title.
        """
        count(f"write_page {title}")
        await stop_here("tool")
        return f"wrote {title}"

    @tool(idempotent=True)
    async def read_page(title: str) -> str:
        """Read a page.

        Args:
            title: its title.
        """
        count(f"read_page {title}")
        await stop_here("idempotent")
        return f"page {title}"

    @tool(requires_permission=True)
    async def publish(title: str) -> str:
        """Publish a page.

        Args:
            title: its title.
        """
        count(f"publish {title}")
        return f"published {title}"

    async def reply(request: ModelRequest) -> Message | list[ToolCall] | str:
        replies = sum(1 for m in request.messages if m.sender == "agent")
        count(f"model {replies}")
        if replies == 0:
            if point == "permission":
                return [ToolCall(id="c0", name="publish", input={"title": "a"})]
            return [
                ToolCall(id="c1", name="write_page", input={"title": "a"}),
                ToolCall(id="c2", name="read_page", input={"title": "a"}),
            ]
        await stop_here("model")
        return "done"

    async def run() -> None:
        async with PostgresDatabase(url) as db, DbosExecution(url) as execution:
            store = PostgresStore(db, conversation)
            glove = Glove(
                model=ScriptedModel([reply] * 4),
                system_prompt="test",
                store=store,
                execution=execution,
            )
            for each in (write_page, read_page, publish):
                glove.fold(each)
            glove.build()
            display = glove.display_manager
            seen: set[str] = set()

            def asked(slots: object) -> None:
                for slot in display.slots:
                    if slot.renderer != "permission_request" or slot.id in seen:
                        continue
                    seen.add(slot.id)
                    count("asked")
                    if hang:
                        print("AT permission", flush=True)
                    else:
                        asyncio.get_running_loop().call_soon(display.resolve, slot.id, True)

            display.subscribe(asked)
            if mode == "run":
                result = await glove.process_request("write the page")
                print(f"FINAL {result.text}", flush=True)
            else:
                print(f"RESUMED {await glove.resume_interrupted()}", flush=True)

    asyncio.run(run())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], Path(sys.argv[5]))
