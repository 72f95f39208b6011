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
    │   ├── ScriptExhaustedError   a ScriptedModel ran out of replies
    │   ├── MissingAPIKeyError     no API key was passed or found in the environment
    │   ├── ModelConnectionError   the provider was unreachable or dropped the reply (after retries)
    │   └── ModelAPIError          the provider answered with an HTTP error
    │       ├── ModelBadRequestError      400: the request was rejected (the API's message)
    │       │   └── ContextWindowExceededError  the prompt is over the context window
    │       ├── ModelAuthenticationError  401/403: the key is wrong or lacks access
    │       ├── ModelRateLimitError       429, still after retries (``retry_after``)
    │       ├── ModelOverloadedError      529, still after retries (``retry_after``)
    │       └── ModelServerError          other 5xx, still after retries
    ├── ContextProviderError       a runtime context provider failed; no model call was made
    ├── ContextItemError           a context item was refused (invalid, too large, not allowed)
    │   └── ContextKeyConflictError  a key was reused with different items
    ├── EventRefusedError          emit_event refused an event; nothing was queued
    │   ├── EventTooLargeError     the event is over EventsConfig.max_event_bytes (also ValueError)
    │   └── EventQueueFullError    too many events already wait for the conversation
    ├── DisplayError               a display slot cannot be resolved
    │   └── SlotNotFoundError      no pending slot has that id
    └── StoreError                 a conversation store cannot be opened, read or written
        ├── StoreCorruptError      the file is not a SQLite database, or is damaged
        ├── StoreVersionError      the file was written by a newer glove (newer schema)
        ├── StoreNotFoundError     no store file at the path (outside-process helpers)
        ├── ConversationLockedError  another process kept the conversation's turn too long
        └── InboxItemError         an inbox item is unknown, ambiguous or not pending
"""

from __future__ import annotations

__all__ = [
    "ContextItemError",
    "ContextKeyConflictError",
    "ContextProviderError",
    "ContextWindowExceededError",
    "ConversationLockedError",
    "DisplayError",
    "EventQueueFullError",
    "EventRefusedError",
    "EventTooLargeError",
    "GloveError",
    "GloveStateError",
    "InboxItemError",
    "MissingAPIKeyError",
    "ModelAPIError",
    "ModelAuthenticationError",
    "ModelBadRequestError",
    "ModelConnectionError",
    "ModelError",
    "ModelOverloadedError",
    "ModelRateLimitError",
    "ModelServerError",
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

    def __init__(self, name: str, sources: tuple[object, object] | None = None) -> None:
        self.name = name
        self.sources = sources
        """The two tool sources that both offer ``name``, when the clash is between sources."""
        where = (
            f"offered by two tool sources ({sources[0]!r} and {sources[1]!r})"
            if sources is not None
            else "already offered by this Glove (folded, or from a tool source)"
        )
        super().__init__(
            f"a tool named {name!r} is {where}; tool names must be unique (rename one of "
            "them, or namespace them, e.g. 'server__tool')"
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


class MissingAPIKeyError(ModelError):
    """No API key was passed to a model adapter and none is in the environment."""

    def __init__(self, provider: str, env_var: str) -> None:
        self.provider = provider
        self.env_var = env_var
        super().__init__(
            f"no API key for {provider}: pass api_key=... to the model adapter, set the "
            f"{env_var} environment variable, or pass a configured client=..."
        )


class ModelConnectionError(ModelError):
    """The provider could not be reached, or the connection dropped mid-reply, on every try."""

    def __init__(self, provider: str, detail: str, attempts: int) -> None:
        self.provider = provider
        self.detail = detail
        self.attempts = attempts
        super().__init__(
            f"{provider}: the connection failed on all {attempts} attempt(s) ({detail}); check "
            "base_url and the network, then send the request again"
        )


class ModelAPIError(ModelError):
    """The provider answered with an HTTP error.

    Attributes:
        provider: e.g. ``anthropic``.
        status_code: the HTTP status.
        api_message: the API's own explanation (``error.message``), when it gave one.
        retry_after: seconds the provider asked us to wait, when it said.
        attempts: how many times the request was sent.
        request_id: the provider's request id, for a support ticket.
    """

    hint = "See the provider's message."

    def __init__(
        self,
        provider: str,
        status_code: int,
        api_message: str | None,
        *,
        retry_after: float | None = None,
        attempts: int = 1,
        request_id: str | None = None,
    ) -> None:
        self.provider = provider
        self.status_code = status_code
        self.api_message = api_message
        self.retry_after = retry_after
        self.attempts = attempts
        self.request_id = request_id
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        rid = f" (request id {request_id})" if request_id else ""
        super().__init__(
            f"{provider} answered HTTP {status_code}{tries}: {api_message or 'no message'}"
            f"{rid}. {self.hint}"
        )


class ModelBadRequestError(ModelAPIError):
    """The provider rejected the request as invalid (HTTP 400)."""

    hint = "The request is invalid as sent; fix what the message names (a retry will not help)."


class ContextWindowExceededError(ModelBadRequestError):
    """The prompt is longer than the model's context window.

    Compacting the conversation (or dropping context) and retrying once is the remedy.
    """

    hint = "Compact the conversation (or drop context) and send the request again."


class ModelAuthenticationError(ModelAPIError):
    """The API key was refused (HTTP 401 or 403)."""

    hint = "Check the API key (api_key=... or the environment variable) and its permissions."


class ModelRateLimitError(ModelAPIError):
    """The provider kept answering 429 (rate limited) until the retries ran out."""

    hint = "Wait retry_after seconds (or lower the request rate) and send the request again."


class ModelOverloadedError(ModelAPIError):
    """The provider kept answering 529 (overloaded) until the retries ran out."""

    hint = "The provider is overloaded; send the request again later."


class ModelServerError(ModelAPIError):
    """The provider kept failing with a 5xx status until the retries ran out."""

    hint = "The provider failed; send the request again later."


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


class ConversationLockedError(StoreError):
    """A turn waited longer than the store's turn-lock timeout: another process (or another
    store object) is running a turn of the same conversation.

    Nothing was saved by the turn that gave up; the conversation is as the holder leaves it.

    Attributes:
        conversation_id: the conversation.
        lock: where the lock lives (for ``SqliteStore``, the lock file).
        waited: seconds waited.
    """

    def __init__(self, conversation_id: str, lock: str, waited: float) -> None:
        self.conversation_id = conversation_id
        self.lock = lock
        self.waited = waited
        super().__init__(
            f"conversation {conversation_id!r} is in a turn held by another process (or another "
            f"store object) on the same store; gave up after waiting {waited:g} s for its lock "
            f"({lock}). Retry when that turn ends, or give the store a larger "
            "turn_lock_timeout= (None waits as long as it takes)."
        )


class InboxItemError(StoreError, LookupError):
    """An inbox item cannot be resolved: unknown id, ambiguous id, or not pending."""

    def __init__(self, item_id: str, problem: str) -> None:
        self.item_id = item_id
        self.problem = problem
        super().__init__(f"inbox item {item_id!r}: {problem}")


class ContextProviderError(GloveError):
    """A runtime context provider raised, timed out or returned something unusable.

    The model call it was preparing is not made: sending stale state would be worse.
    """

    def __init__(self, provider: str, delivery: str, problem: str) -> None:
        self.provider = provider
        self.delivery = delivery
        self.problem = problem
        super().__init__(
            f"{delivery} context provider {provider!r} failed: {problem}; the model was not "
            "called. Fix the provider or remove it (add_context_provider returns a remover)."
        )


class ContextItemError(GloveError):
    """A context item given to ``add_context`` was refused; nothing was recorded."""


class ContextKeyConflictError(ContextItemError):
    """``add_context`` got a key it had already recorded, with different items."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f"add_context key {key!r} was already used with different items; nothing was "
            "recorded. Retry with exactly the items first sent under that key, or use a new key."
        )


class EventRefusedError(GloveError):
    """``emit_event`` refused an event; nothing was queued, so the sender may retry it."""


class EventTooLargeError(EventRefusedError, ValueError):
    """An event is larger than ``EventsConfig.max_event_bytes``."""

    def __init__(self, event_id: str, size: int, limit: int) -> None:
        self.event_id = event_id
        self.size = size
        self.limit = limit
        super().__init__(
            f"event {event_id[:80]!r} is {size} bytes, over the {limit}-byte limit "
            "(EventsConfig.max_event_bytes, counting id, source, kind and content); nothing was "
            "queued. Send a short event that points to the data (a URL, a file, a record id) "
            "instead of the data itself, or raise the limit."
        )


class EventQueueFullError(EventRefusedError):
    """Too many events (or bytes of events) already wait for the conversation to take them."""

    def __init__(self, event_id: str, what: str, limit: int, setting: str) -> None:
        self.event_id = event_id
        self.limit = limit
        self.setting = setting
        super().__init__(
            f"event {event_id[:80]!r} was refused: {what} already wait for this conversation, "
            f"at the limit of {limit} (EventsConfig.{setting}); nothing was queued. Retry after "
            "the agent's next turn has taken them, or raise the limit."
        )
