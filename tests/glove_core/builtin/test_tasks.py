"""glove_update_tasks through the real loop: full-list replace, one in_progress, clear errors."""

from __future__ import annotations

from typing import Any

from glove_core import Glove, MemoryStore, ScriptedModel, Task, ToolCall, ToolResultData
from glove_core.builtin import POST_TO_INBOX_TOOL_NAME, UPDATE_TASKS_TOOL_NAME
from glove_core.stores.memory import PlainMemoryStore


async def run_tasks_call(store: MemoryStore, tasks: Any) -> ToolResultData:
    model = ScriptedModel(
        [[ToolCall(id="c1", name=UPDATE_TASKS_TOOL_NAME, input={"tasks": tasks})], "ok"]
    )
    glove = Glove(model=model, system_prompt="s", store=store).build()
    result = await glove.process_request("update the tasks")
    [results] = [m.tool_results for m in result.messages if m.tool_results]
    assert results is not None
    return results[0].result


async def test_builtins_are_folded_when_the_store_supports_them() -> None:
    glove = Glove(model=ScriptedModel([]), system_prompt="s", store=MemoryStore()).build()
    assert [t.name for t in glove.tools] == [UPDATE_TASKS_TOOL_NAME, POST_TO_INBOX_TOOL_NAME]
    glove.build()  # a second build folds nothing more
    assert len(glove.tools) == 2

    plain = Glove(
        model=ScriptedModel([]), system_prompt="s", store=PlainMemoryStore("plain")
    ).build()
    assert plain.tools == []


async def test_the_list_is_replaced_whole_and_new_tasks_get_ids() -> None:
    store = MemoryStore()
    await store.set_tasks([Task(id="old", content="stale")])
    result = await run_tasks_call(
        store,
        [
            {"id": "t1", "content": "read the spec", "status": "completed"},
            {"content": "write code", "status": "in_progress"},
            {"content": "write tests"},
        ],
    )
    assert result.status == "success"
    assert await store.get_tasks() == [
        Task(id="t1", content="read the spec", status="completed"),
        Task(id="t2", content="write code", status="in_progress"),
        Task(id="t3", content="write tests", status="pending"),
    ]
    assert "3 task(s), 1 completed" in result.data
    assert "- [in_progress] t2: write code" in result.data
    assert result.render_data["tasks"][1]["status"] == "in_progress"


async def test_an_empty_list_clears_it() -> None:
    store = MemoryStore()
    await store.set_tasks([Task(id="a", content="x")])
    result = await run_tasks_call(store, [])
    assert (result.status, result.data) == ("success", "Task list cleared.")
    assert await store.get_tasks() == []


async def test_two_in_progress_is_an_error_the_model_can_fix() -> None:
    store = MemoryStore()
    kept = [Task(id="a", content="keep me")]
    await store.set_tasks(kept)
    result = await run_tasks_call(
        store,
        [
            {"content": "one", "status": "in_progress"},
            {"content": "two", "status": "in_progress"},
        ],
    )
    assert result.status == "error"
    assert result.message is not None
    assert "2 tasks are in_progress ('one', 'two'); at most one may be" in result.message
    assert await store.get_tasks() == kept


async def test_duplicate_ids_and_bad_fields_are_errors() -> None:
    store = MemoryStore()
    duplicate = await run_tasks_call(
        store, [{"id": "x", "content": "a"}, {"id": "x", "content": "b"}]
    )
    assert duplicate.status == "error"
    assert "repeated: 'x'" in (duplicate.message or "")

    bad_status = await run_tasks_call(store, [{"content": "a", "status": "done"}])
    assert bad_status.status == "error"
    assert "tasks.0.status" in (bad_status.message or "")

    empty = await run_tasks_call(store, [{"content": ""}])
    assert empty.status == "error"
    assert "tasks.0.content" in (empty.message or "")
    assert await store.get_tasks() == []
