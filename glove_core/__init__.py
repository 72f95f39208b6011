"""glove_core: the agent loop.

A ``Glove`` sends a model its system prompt, the saved conversation and what is true right now,
runs the tools the model asks for, and repeats until the model answers.
"""

from glove_core.abort import AbortController as AbortController
from glove_core.abort import AbortError as AbortError
from glove_core.abort import AbortSignal as AbortSignal
from glove_core.display import DisplayManager as DisplayManager
from glove_core.display import Slot as Slot
from glove_core.errors import DisplayError as DisplayError
from glove_core.errors import GloveError as GloveError
from glove_core.errors import GloveStateError as GloveStateError
from glove_core.errors import ModelError as ModelError
from glove_core.errors import ReentrantRequestError as ReentrantRequestError
from glove_core.errors import ScriptExhaustedError as ScriptExhaustedError
from glove_core.errors import SlotNotFoundError as SlotNotFoundError
from glove_core.errors import ToolDefinitionError as ToolDefinitionError
from glove_core.errors import ToolNameConflictError as ToolNameConflictError
from glove_core.glove import Glove as Glove
from glove_core.loop import RequestResult as RequestResult
from glove_core.models.base import ModelAdapter as ModelAdapter
from glove_core.models.base import ModelRequest as ModelRequest
from glove_core.models.base import ModelResponse as ModelResponse
from glove_core.models.scripted import ScriptedModel as ScriptedModel
from glove_core.stores.base import InboxStore as InboxStore
from glove_core.stores.base import PermissionStore as PermissionStore
from glove_core.stores.base import StoreAdapter as StoreAdapter
from glove_core.stores.base import TaskStore as TaskStore
from glove_core.stores.memory import MemoryStore as MemoryStore
from glove_core.subagents import SUBAGENT_TOOL_NAME as SUBAGENT_TOOL_NAME
from glove_core.subscribers import CompactionEnd as CompactionEnd
from glove_core.subscribers import CompactionStart as CompactionStart
from glove_core.subscribers import EventPayload as EventPayload
from glove_core.subscribers import EventType as EventType
from glove_core.subscribers import ModelResponseCompleteEvent as ModelResponseCompleteEvent
from glove_core.subscribers import ModelResponseEvent as ModelResponseEvent
from glove_core.subscribers import Notify as Notify
from glove_core.subscribers import SubagentCompleted as SubagentCompleted
from glove_core.subscribers import SubagentInvoked as SubagentInvoked
from glove_core.subscribers import Subscriber as Subscriber
from glove_core.subscribers import TextDelta as TextDelta
from glove_core.subscribers import TokenConsumption as TokenConsumption
from glove_core.subscribers import ToolUse as ToolUse
from glove_core.subscribers import ToolUseResult as ToolUseResult
from glove_core.tools import Tool as Tool
from glove_core.tools import ToolContext as ToolContext
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

__all__ = [
    "SUBAGENT_TOOL_NAME",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "CompactionEnd",
    "CompactionStart",
    "ContentPart",
    "DisplayError",
    "DisplayManager",
    "DocumentPart",
    "EventPayload",
    "EventType",
    "Glove",
    "GloveError",
    "GloveStateError",
    "ImagePart",
    "InboxItem",
    "InboxStore",
    "MemoryStore",
    "Message",
    "ModelAdapter",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ModelResponseCompleteEvent",
    "ModelResponseEvent",
    "Notify",
    "PermissionStore",
    "ReentrantRequestError",
    "RequestResult",
    "ScriptExhaustedError",
    "ScriptedModel",
    "Slot",
    "SlotNotFoundError",
    "StoreAdapter",
    "SubagentCompleted",
    "SubagentInvoked",
    "Subscriber",
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
    "ToolSpec",
    "ToolUse",
    "ToolUseResult",
    "Usage",
    "tool",
]
