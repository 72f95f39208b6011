"""glove_core: the agent loop.

A ``Glove`` sends a model its system prompt, the saved conversation and what is true right now,
runs the tools the model asks for, and repeats until the model answers.

The root holds what an application builds an agent from; the rest lives in named submodules:
``glove_core.errors`` (every exception), ``glove_core.subscribers`` (event payloads),
``glove_core.events`` and ``glove_core.event_queue`` (outside events), ``glove_core.sqlite``
(the SQLite layer), ``glove_core.context`` / ``context_items``, ``glove_core.stores``.
"""

from typing import TYPE_CHECKING, Any

from glove_core.abort import AbortController as AbortController
from glove_core.abort import AbortError as AbortError
from glove_core.abort import AbortSignal as AbortSignal
from glove_core.compaction import CompactionConfig as CompactionConfig
from glove_core.context_items import ContextItem as ContextItem
from glove_core.context_items import disable_tools as disable_tools
from glove_core.context_items import enable_tools as enable_tools
from glove_core.context_items import instruction as instruction
from glove_core.context_items import notice as notice
from glove_core.display import DisplayManager as DisplayManager
from glove_core.display import Slot as Slot
from glove_core.errors import GloveError as GloveError
from glove_core.event_queue import SqliteEventQueue as SqliteEventQueue
from glove_core.events import EventsConfig as EventsConfig
from glove_core.glove import Glove as Glove
from glove_core.models.base import ModelAdapter as ModelAdapter
from glove_core.models.base import ModelRequest as ModelRequest
from glove_core.models.base import ModelResponse as ModelResponse
from glove_core.models.openai_compat import OpenAICompatModel as OpenAICompatModel
from glove_core.models.retry import RetryPolicy as RetryPolicy
from glove_core.models.scripted import ScriptedModel as ScriptedModel
from glove_core.result import RequestResult as RequestResult
from glove_core.result_limits import ResultLimits as ResultLimits
from glove_core.result_summaries import ResultSummaries as ResultSummaries
from glove_core.stores.base import CompactedHistoryStore as CompactedHistoryStore
from glove_core.stores.base import InboxStore as InboxStore
from glove_core.stores.base import PermissionStore as PermissionStore
from glove_core.stores.base import PositionalHistoryStore as PositionalHistoryStore
from glove_core.stores.base import ReplyStore as ReplyStore
from glove_core.stores.base import StoreAdapter as StoreAdapter
from glove_core.stores.base import TaskStore as TaskStore
from glove_core.stores.base import TurnLockStore as TurnLockStore
from glove_core.stores.memory import MemoryStore as MemoryStore
from glove_core.stores.sqlite import SqliteStore as SqliteStore
from glove_core.subscribers import CacheCollapse as CacheCollapse
from glove_core.subscribers import Subscriber as Subscriber
from glove_core.subscribers import SubscriberEvent as SubscriberEvent
from glove_core.tools import AgentHandle as AgentHandle
from glove_core.tools import JoiningToolSource as JoiningToolSource
from glove_core.tools import Tool as Tool
from glove_core.tools import ToolContext as ToolContext
from glove_core.tools import ToolSource as ToolSource
from glove_core.tools import tool as tool
from glove_core.types import ContentPart as ContentPart
from glove_core.types import DocumentPart as DocumentPart
from glove_core.types import ImagePart as ImagePart
from glove_core.types import InboxItem as InboxItem
from glove_core.types import Message as Message
from glove_core.types import Task as Task
from glove_core.types import TextPart as TextPart
from glove_core.types import ToolCall as ToolCall
from glove_core.types import ToolResult as ToolResult
from glove_core.types import ToolResultData as ToolResultData
from glove_core.types import Usage as Usage
from glove_core.untrusted import mark_untrusted as mark_untrusted
from glove_core.untrusted import untrusted_text as untrusted_text

if TYPE_CHECKING:
    from glove_core.models.anthropic import AnthropicModel as AnthropicModel

__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AgentHandle",
    "AnthropicModel",
    "CacheCollapse",
    "CompactedHistoryStore",
    "CompactionConfig",
    "ContentPart",
    "ContextItem",
    "DisplayManager",
    "DocumentPart",
    "EventsConfig",
    "Glove",
    "GloveError",
    "ImagePart",
    "InboxItem",
    "InboxStore",
    "JoiningToolSource",
    "MemoryStore",
    "Message",
    "ModelAdapter",
    "ModelRequest",
    "ModelResponse",
    "OpenAICompatModel",
    "PermissionStore",
    "PositionalHistoryStore",
    "ReplyStore",
    "RequestResult",
    "ResultLimits",
    "ResultSummaries",
    "RetryPolicy",
    "ScriptedModel",
    "Slot",
    "SqliteEventQueue",
    "SqliteStore",
    "StoreAdapter",
    "Subscriber",
    "SubscriberEvent",
    "Task",
    "TaskStore",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ToolResultData",
    "ToolSource",
    "TurnLockStore",
    "Usage",
    "disable_tools",
    "enable_tools",
    "instruction",
    "mark_untrusted",
    "notice",
    "tool",
    "untrusted_text",
]


def __getattr__(name: str) -> Any:
    # AnthropicModel loads the anthropic SDK (slow to import) only when it is first used.
    if name == "AnthropicModel":
        from glove_core.models import anthropic

        return anthropic.AnthropicModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
