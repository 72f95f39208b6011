"""Conversation stores."""

from glove_core.stores.base import (
    CompactedHistoryStore as CompactedHistoryStore,
)
from glove_core.stores.base import (
    InboxStore as InboxStore,
)
from glove_core.stores.base import (
    PermissionStatus as PermissionStatus,
)
from glove_core.stores.base import (
    PermissionStore as PermissionStore,
)
from glove_core.stores.base import (
    PositionalHistoryStore as PositionalHistoryStore,
)
from glove_core.stores.base import (
    ReplyStore as ReplyStore,
)
from glove_core.stores.base import (
    RequestStart as RequestStart,
)
from glove_core.stores.base import (
    RequestStartStore as RequestStartStore,
)
from glove_core.stores.base import (
    StoreAdapter as StoreAdapter,
)
from glove_core.stores.base import (
    TaskStore as TaskStore,
)
from glove_core.stores.base import (
    TurnLockStore as TurnLockStore,
)
from glove_core.stores.memory import MemoryStore as MemoryStore
from glove_core.stores.memory import PlainMemoryStore as PlainMemoryStore
from glove_core.stores.sqlite import SessionInfo as SessionInfo
from glove_core.stores.sqlite import SqliteStore as SqliteStore

__all__ = [
    "CompactedHistoryStore",
    "InboxStore",
    "MemoryStore",
    "PermissionStatus",
    "PermissionStore",
    "PlainMemoryStore",
    "PositionalHistoryStore",
    "ReplyStore",
    "RequestStart",
    "RequestStartStore",
    "SessionInfo",
    "SqliteStore",
    "StoreAdapter",
    "TaskStore",
    "TurnLockStore",
]
