"""``glove_update_tasks``: the agent's task list, replaced whole on every call.

Folded by ``Glove.build()`` when the store implements ``TaskStore``. Replacing the full list
(rather than patching entries) keeps the stored list exactly what the model last said it is.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glove_core.stores.base import TaskStore
from glove_core.tools import Tool, ToolContext
from glove_core.types import Task, ToolResultData

__all__ = ["UPDATE_TASKS_TOOL_NAME", "format_tasks", "update_tasks_tool"]

UPDATE_TASKS_TOOL_NAME = "glove_update_tasks"
"""The name the model calls the task tool by."""

_DESCRIPTION = (
    "Replace your task list for this conversation. Use it for work with three or more steps: "
    "send the WHOLE list every time (it replaces the previous one), mark exactly one task "
    "in_progress while you work on it, and mark tasks completed as soon as they are done. "
    "Send an empty list to clear it."
)


class _TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(
        default=None, description="A stable id; keep it across updates. Omit for a new task."
    )
    content: str = Field(min_length=1, description="What the task is, imperative and short.")
    status: Literal["pending", "in_progress", "completed"] = "pending"


class UpdateTasksInput(BaseModel):
    """Input of ``glove_update_tasks``."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[_TaskEntry] = Field(description="The complete new task list, in order.")


def format_tasks(tasks: list[Task]) -> str:
    """The task list as lines for the model, e.g. ``- [in_progress] t2: write tests``."""
    return "\n".join(f"- [{t.status}] {t.id}: {t.content}" for t in tasks)


async def _update_tasks(input: UpdateTasksInput, ctx: ToolContext) -> ToolResultData:
    store = ctx.glove.store
    if not isinstance(store, TaskStore):
        return ToolResultData(
            status="error",
            message="this conversation's store keeps no task list; continue without one",
        )
    in_progress = [e.content for e in input.tasks if e.status == "in_progress"]
    if len(in_progress) > 1:
        return ToolResultData(
            status="error",
            message=(
                f"{len(in_progress)} tasks are in_progress ({', '.join(map(repr, in_progress))}); "
                "at most one may be. Keep one in_progress, mark the others pending or "
                "completed, and send the whole list again."
            ),
        )
    given = [e.id for e in input.tasks if e.id is not None]
    duplicated = sorted(i for i, n in Counter(given).items() if n > 1)
    if duplicated:
        return ToolResultData(
            status="error",
            message=(
                f"task ids must be unique; repeated: {', '.join(map(repr, duplicated))}. "
                "Give each task its own id and send the whole list again."
            ),
        )
    taken = set(given)
    tasks: list[Task] = []
    counter = 0
    for entry in input.tasks:
        task_id = entry.id
        if task_id is None:
            counter += 1
            while f"t{counter}" in taken:
                counter += 1
            task_id = f"t{counter}"
            taken.add(task_id)
        tasks.append(Task(id=task_id, content=entry.content, status=entry.status))
    await store.set_tasks(tasks)
    done = sum(t.status == "completed" for t in tasks)
    summary = f"Task list saved: {len(tasks)} task(s), {done} completed."
    return ToolResultData(
        status="success",
        data=f"{summary}\n{format_tasks(tasks)}" if tasks else "Task list cleared.",
        render_data={"tasks": [t.model_dump() for t in tasks]},
    )


def update_tasks_tool() -> Tool:
    """A fresh ``glove_update_tasks`` tool; it writes to the running Glove's store."""
    return Tool(
        name=UPDATE_TASKS_TOOL_NAME,
        description=_DESCRIPTION,
        do=_update_tasks,
        input_model=UpdateTasksInput,
    )
