"""Exceptions raised by glove_core.

Failures the *model* can act on never raise: they become tool results with
``status="error"``. What is raised here is for the *caller*::

    GloveError
    ├── AbortError                 a request or wait was aborted (glove_core.abort)
    ├── GloveStateError            the Glove is used in a state that does not allow it
    │   └── ReentrantRequestError  process_request called from inside one of its own tools
    ├── ToolDefinitionError        a tool is malformed (fix your code)
    │   └── ToolNameConflictError  two tools share one name
    ├── ModelError                 the model adapter failed
    │   └── ScriptExhaustedError   a ScriptedModel ran out of replies
    ├── DisplayError               a display slot cannot be resolved
    │   └── SlotNotFoundError      no pending slot has that id
    └── StoreError                 a conversation store cannot be opened, read or written
        ├── StoreCorruptError      the file is not a SQLite database, or is damaged
        ├── StoreVersionError      the file was written by a newer glove (newer schema)
        ├── StoreNotFoundError     no store file at the path (outside-process helpers)
        └── InboxItemError         an inbox item is unknown, ambiguous or not pending
"""

from __future__ import annotations

__all__ = [
    "DisplayError",
    "GloveError",
    "GloveStateError",
    "InboxItemError",
    "ModelError",
    "ReentrantRequestError",
    "ScriptExhaustedError",
    "SlotNotFoundError",
    "StoreCorruptError",
    "StoreError",
    "StoreNotFoundError",
    "StoreVersionError",
    "ToolDefinitionError",
    "ToolNameConflictError",
]


class GloveError(Exception):
    """Base class of every exception glove_core raises on purpose."""


class GloveStateError(GloveError):
    """The Glove (or another object) is in a state that forbids the call."""


class ReentrantRequestError(GloveStateError):
    """``process_request`` was awaited from inside a tool of the same Glove.

    The outer request holds the turn, so the inner one could never start.
    """

    def __init__(self) -> None:
        super().__init__(
            "process_request() was called from inside a tool of the same Glove, which would "
            "deadlock: the outer request holds the turn. To run a nested conversation, define a "
            "subagent with glove.define_sub_agent(name, description, factory) and let the model "
            "call it, or build a separate Glove inside the tool."
        )


class ToolDefinitionError(GloveError):
    """A tool definition is malformed."""


class ToolNameConflictError(ToolDefinitionError):
    """Two tools were registered under one name."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"a tool named {name!r} is already folded into this Glove; tool names must be "
            "unique (rename one of them, or namespace them, e.g. 'server__tool')"
        )


class ModelError(GloveError):
    """The model adapter could not produce a reply."""


class ScriptExhaustedError(ModelError):
    """A ScriptedModel was asked for more replies than its script holds."""

    def __init__(self, served: int, last_message: str | None) -> None:
        self.served = served
        detail = f"; the request ended with: {last_message!r}" if last_message else ""
        super().__init__(
            f"ScriptedModel has no reply left: its script held {served} item(s) and all were "
            f"used{detail}. Add more items to the script."
        )


class DisplayError(GloveError):
    """A display slot could not be resolved or rejected."""


class SlotNotFoundError(DisplayError):
    """No pending slot has the given id."""

    def __init__(self, slot_id: str) -> None:
        self.slot_id = slot_id
        super().__init__(
            f"no pending display slot with id {slot_id!r}: it was never pushed, was pushed with "
            "push_and_forget, or has already been resolved, rejected or aborted"
        )


class StoreError(GloveError):
    """A conversation store could not be opened, read or written."""


class StoreCorruptError(StoreError):
    """The store file is not a SQLite database, or its contents are damaged.

    The file is left exactly as it was found.
    """

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(
            f"{path!r} is not a usable glove store ({detail}); it was left untouched. Point "
            "SqliteStore at a different file, or restore this one from a backup."
        )


class StoreVersionError(StoreError):
    """The store file has a newer schema than this version of glove can read."""

    def __init__(self, path: str, found: int, supported: int) -> None:
        self.path = path
        self.found = found
        self.supported = supported
        super().__init__(
            f"{path!r} has store schema version {found}, but this glove reads versions up to "
            f"{supported}; it was left untouched. Upgrade glove to open it."
        )


class StoreNotFoundError(StoreError):
    """No store file exists at the path given to an outside-process helper."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"no glove store at {path!r}: check the path (it is created by the first "
            "SqliteStore that writes to it)"
        )


class InboxItemError(StoreError, LookupError):
    """An inbox item cannot be resolved: unknown id, ambiguous id, or not pending."""

    def __init__(self, item_id: str, problem: str) -> None:
        self.item_id = item_id
        self.problem = problem
        super().__init__(f"inbox item {item_id!r}: {problem}")
