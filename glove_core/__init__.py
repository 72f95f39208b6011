"""glove_core: the agent loop.

A ``Glove`` sends a model its system prompt, the saved conversation and what is true right now,
runs the tools the model asks for, and repeats until the model answers.
"""

from typing import TYPE_CHECKING, Any

from glove_core.abort import AbortController as AbortController
from glove_core.abort import AbortError as AbortError
from glove_core.abort import AbortSignal as AbortSignal
from glove_core.compaction import CompactionConfig as CompactionConfig
from glove_core.context import ContextDelivery as ContextDelivery
from glove_core.context import ContextSnapshot as ContextSnapshot
from glove_core.context_items import ContextItem as ContextItem
from glove_core.context_items import InstructionItem as InstructionItem
from glove_core.context_items import NoticeItem as NoticeItem
from glove_core.context_items import ToolsItem as ToolsItem
from glove_core.context_items import disable_tools as disable_tools
from glove_core.context_items import enable_tools as enable_tools
from glove_core.context_items import instruction as instruction
from glove_core.context_items import notice as notice
from glove_core.display import DisplayManager as DisplayManager
from glove_core.display import Slot as Slot
from glove_core.errors import ContextItemError as ContextItemError
from glove_core.errors import ContextKeyConflictError as ContextKeyConflictError
from glove_core.errors import ContextProviderError as ContextProviderError
from glove_core.errors import ContextWindowExceededError as ContextWindowExceededError
from glove_core.errors import DisplayError as DisplayError
from glove_core.errors import GloveError as GloveError
from glove_core.errors import GloveStateError as GloveStateError
from glove_core.errors import InboxItemError as InboxItemError
from glove_core.errors import MissingAPIKeyError as MissingAPIKeyError
from glove_core.errors import ModelAPIError as ModelAPIError
from glove_core.errors import ModelAuthenticationError as ModelAuthenticationError
from glove_core.errors import ModelBadRequestError as ModelBadRequestError
from glove_core.errors import ModelConnectionError as ModelConnectionError
from glove_core.errors import ModelError as ModelError
from glove_core.errors import ModelOverloadedError as ModelOverloadedError
from glove_core.errors import ModelRateLimitError as ModelRateLimitError
from glove_core.errors import ModelServerError as ModelServerError
from glove_core.errors import ReentrantRequestError as ReentrantRequestError
from glove_core.errors import ScriptExhaustedError as ScriptExhaustedError
from glove_core.errors import SlotNotFoundError as SlotNotFoundError
from glove_core.errors import StoreCorruptError as StoreCorruptError
from glove_core.errors import StoreError as StoreError
from glove_core.errors import StoreNotFoundError as StoreNotFoundError
from glove_core.errors import StoreVersionError as StoreVersionError
from glove_core.errors import ToolDefinitionError as ToolDefinitionError
from glove_core.errors import ToolNameConflictError as ToolNameConflictError
from glove_core.event_queue import EventQueue as EventQueue
from glove_core.event_queue import MemoryEventQueue as MemoryEventQueue
from glove_core.event_queue import OutsideEvent as OutsideEvent
from glove_core.event_queue import SqliteEventQueue as SqliteEventQueue
from glove_core.events import EventDisposition as EventDisposition
from glove_core.events import EventsConfig as EventsConfig
from glove_core.events import default_event_policy as default_event_policy
from glove_core.events import format_events as format_events
from glove_core.glove import Glove as Glove
from glove_core.glove import TurnPreparer as TurnPreparer
from glove_core.models._retry import RetryPolicy as RetryPolicy
from glove_core.models.base import ModelAdapter as ModelAdapter
from glove_core.models.base import ModelRequest as ModelRequest
from glove_core.models.base import ModelResponse as ModelResponse
from glove_core.models.openai_compat import OpenAICompatModel as OpenAICompatModel
from glove_core.models.scripted import ScriptedModel as ScriptedModel
from glove_core.result import RequestResult as RequestResult
from glove_core.sqlite import SQLITE_BUSY_TIMEOUT as SQLITE_BUSY_TIMEOUT
from glove_core.sqlite import SqliteDatabase as SqliteDatabase
from glove_core.sqlite import SqliteSchema as SqliteSchema
from glove_core.stores.base import InboxStore as InboxStore
from glove_core.stores.base import PermissionStore as PermissionStore
from glove_core.stores.base import StoreAdapter as StoreAdapter
from glove_core.stores.base import TaskStore as TaskStore
from glove_core.stores.memory import MemoryStore as MemoryStore
from glove_core.stores.sqlite import SessionInfo as SessionInfo
from glove_core.stores.sqlite import SqliteStore as SqliteStore
from glove_core.subagents import SUBAGENT_TOOL_NAME as SUBAGENT_TOOL_NAME
from glove_core.subscribers import CacheCollapse as CacheCollapse
from glove_core.subscribers import CacheCollapseKind as CacheCollapseKind
from glove_core.subscribers import CompactionEnd as CompactionEnd
from glove_core.subscribers import CompactionStart as CompactionStart
from glove_core.subscribers import EventDropped as EventDropped
from glove_core.subscribers import EventInjected as EventInjected
from glove_core.subscribers import EventPayload as EventPayload
from glove_core.subscribers import EventReceived as EventReceived
from glove_core.subscribers import EventType as EventType
from glove_core.subscribers import EventWakeFailed as EventWakeFailed
from glove_core.subscribers import ModelResponseCompleteEvent as ModelResponseCompleteEvent
from glove_core.subscribers import ModelResponseEvent as ModelResponseEvent
from glove_core.subscribers import Notify as Notify
from glove_core.subscribers import Publish as Publish
from glove_core.subscribers import RuntimeContextEvent as RuntimeContextEvent
from glove_core.subscribers import SubagentCompleted as SubagentCompleted
from glove_core.subscribers import SubagentInvoked as SubagentInvoked
from glove_core.subscribers import Subscriber as Subscriber
from glove_core.subscribers import SubscriberEvent as SubscriberEvent
from glove_core.subscribers import TextDelta as TextDelta
from glove_core.subscribers import TokenConsumption as TokenConsumption
from glove_core.subscribers import ToolUse as ToolUse
from glove_core.subscribers import ToolUseResult as ToolUseResult
from glove_core.tools import AgentHandle as AgentHandle
from glove_core.tools import Tool as Tool
from glove_core.tools import ToolContext as ToolContext
from glove_core.tools import ToolSource as ToolSource
from glove_core.tools import ToolSpec as ToolSpec
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

if TYPE_CHECKING:
    from glove_core.models.anthropic import AnthropicModel as AnthropicModel
    from glove_core.models.anthropic import CacheTTL as CacheTTL
from glove_core.stores.memory import PlainMemoryStore as PlainMemoryStore
from glove_core.subagents import run_subagent as run_subagent

__all__ = [
    "SQLITE_BUSY_TIMEOUT",
    "SUBAGENT_TOOL_NAME",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AgentHandle",
    "AnthropicModel",
    "CacheCollapse",
    "CacheCollapseKind",
    "CacheTTL",
    "CompactionConfig",
    "CompactionEnd",
    "CompactionStart",
    "ContentPart",
    "ContextDelivery",
    "ContextItem",
    "ContextItemError",
    "ContextKeyConflictError",
    "ContextProviderError",
    "ContextSnapshot",
    "ContextWindowExceededError",
    "DisplayError",
    "DisplayManager",
    "DocumentPart",
    "EventDisposition",
    "EventDropped",
    "EventInjected",
    "EventPayload",
    "EventQueue",
    "EventReceived",
    "EventType",
    "EventWakeFailed",
    "EventsConfig",
    "Glove",
    "GloveError",
    "GloveStateError",
    "ImagePart",
    "InboxItem",
    "InboxItemError",
    "InboxStore",
    "InstructionItem",
    "MemoryEventQueue",
    "MemoryStore",
    "Message",
    "MissingAPIKeyError",
    "ModelAPIError",
    "ModelAdapter",
    "ModelAuthenticationError",
    "ModelBadRequestError",
    "ModelConnectionError",
    "ModelError",
    "ModelOverloadedError",
    "ModelRateLimitError",
    "ModelRequest",
    "ModelResponse",
    "ModelResponseCompleteEvent",
    "ModelResponseEvent",
    "ModelServerError",
    "NoticeItem",
    "Notify",
    "OpenAICompatModel",
    "OutsideEvent",
    "PermissionStore",
    "PlainMemoryStore",
    "Publish",
    "ReentrantRequestError",
    "RequestResult",
    "RetryPolicy",
    "RuntimeContextEvent",
    "ScriptExhaustedError",
    "ScriptedModel",
    "SessionInfo",
    "Slot",
    "SlotNotFoundError",
    "SqliteDatabase",
    "SqliteEventQueue",
    "SqliteSchema",
    "SqliteStore",
    "StoreAdapter",
    "StoreCorruptError",
    "StoreError",
    "StoreNotFoundError",
    "StoreVersionError",
    "SubagentCompleted",
    "SubagentInvoked",
    "Subscriber",
    "SubscriberEvent",
    "Task",
    "TaskStore",
    "TextDelta",
    "TextPart",
    "TokenConsumption",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolNameConflictError",
    "ToolResult",
    "ToolResultData",
    "ToolSource",
    "ToolSpec",
    "ToolUse",
    "ToolUseResult",
    "ToolsItem",
    "TurnPreparer",
    "Usage",
    "default_event_policy",
    "disable_tools",
    "enable_tools",
    "format_events",
    "instruction",
    "notice",
    "run_subagent",
    "tool",
]


def __getattr__(name: str) -> Any:
    # AnthropicModel loads the anthropic SDK (slow to import) only when it is first used.
    if name in ("AnthropicModel", "CacheTTL"):
        from glove_core.models import anthropic

        return getattr(anthropic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
