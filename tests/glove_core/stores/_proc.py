"""Child processes for the SQLite store tests: run with ``python -m tests.glove_core.stores._proc``.

WHERE is a SQLite file or a ``postgresql://`` URL. Commands:
    append WHERE TAG COUNT           print READY, wait for a line on stdin, then COUNT times:
                                    append a message to session "shared" (with usage and a
                                    turn) and one to session TAG.
    turns WHERE TAG COUNT            print READY, wait for a line on stdin, then run COUNT
                                    requests on session "shared", each calling tool ``work``
                                    once (call ids TAG-0, TAG-1, ...), and print DONE.
    crash WHERE SESSION              run a request whose tool prints TOOL_STARTED and then
                                    waits forever (the parent kills the process).
    resolve WHERE ITEM_ID RESPONSE   resolve an inbox item and print the item as JSON.
"""

from __future__ import annotations

import asyncio
import sys

from glove_core import (
    Glove,
    Message,
    ScriptedModel,
    SqliteStore,
    ToolCall,
    ToolContext,
    Usage,
    tool,
)
from tests._backends import store_at


async def _append(path: str, tag: str, count: int) -> None:
    async with store_at(path, "shared") as shared, store_at(path, tag) as own:
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        for index in range(count):
            await shared.append_messages([Message(sender="user", text=f"{tag}:{index}")])
            await shared.add_usage(Usage(input_tokens=1, output_tokens=2))
            await shared.increment_turn()
            await own.append_messages([Message(sender="agent", text=f"own:{index}")])
    print("DONE", flush=True)


@tool
async def work(ctx: ToolContext) -> str:
    """Read the conversation (real I/O, so the other process gets the file in between)."""
    return f"{len(await ctx.glove.store.get_messages())} messages so far"


async def _turns(path: str, tag: str, count: int) -> None:
    script: list[str | list[ToolCall]] = []
    for index in range(count):
        script += [[ToolCall(id=f"{tag}-{index}", name="work", input={})], f"{tag} done {index}"]
    async with store_at(path, "shared") as store:
        glove = Glove(model=ScriptedModel(script), system_prompt="s", store=store)
        glove.fold(work).build()
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        for index in range(count):
            await glove.process_request(f"{tag} request {index}")
    print("DONE", flush=True)


@tool
async def slow_tool() -> str:
    """A tool that never finishes."""
    print("TOOL_STARTED", flush=True)
    await asyncio.Event().wait()
    return "unreachable"


async def _crash(path: str, session: str) -> None:
    async with store_at(path, session) as store:
        model = ScriptedModel([[ToolCall(id="call_slow", name="slow_tool", input={})], "never"])
        glove = Glove(model=model, system_prompt="s", store=store).fold(slow_tool).build()
        await glove.process_request("start the slow tool")


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "append":
        asyncio.run(_append(args[0], args[1], int(args[2])))
    elif command == "turns":
        asyncio.run(_turns(args[0], args[1], int(args[2])))
    elif command == "crash":
        asyncio.run(_crash(args[0], args[1]))
    elif command == "resolve":
        item = SqliteStore.resolve_inbox_item_sync(args[0], args[1], args[2])
        print(item.model_dump_json(), flush=True)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
