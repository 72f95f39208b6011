"""Built-in tools folded by ``Glove.build()`` when the store supports them: the task list
(``glove_update_tasks``) and the inbox (``glove_post_to_inbox``)."""

from glove_core.builtin.inbox import POST_TO_INBOX_TOOL_NAME as POST_TO_INBOX_TOOL_NAME
from glove_core.builtin.inbox import blocking_reminder as blocking_reminder
from glove_core.builtin.inbox import pending_blocking_reminder as pending_blocking_reminder
from glove_core.builtin.inbox import place_transient as place_transient
from glove_core.builtin.inbox import post_to_inbox_tool as post_to_inbox_tool
from glove_core.builtin.inbox import take_resolved_inbox as take_resolved_inbox
from glove_core.builtin.tasks import UPDATE_TASKS_TOOL_NAME as UPDATE_TASKS_TOOL_NAME
from glove_core.builtin.tasks import update_tasks_tool as update_tasks_tool

__all__ = [
    "POST_TO_INBOX_TOOL_NAME",
    "UPDATE_TASKS_TOOL_NAME",
    "blocking_reminder",
    "pending_blocking_reminder",
    "place_transient",
    "post_to_inbox_tool",
    "take_resolved_inbox",
    "update_tasks_tool",
]
