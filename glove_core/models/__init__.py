"""Model adapters.

``AnthropicModel`` is imported on first use: the ``anthropic`` SDK takes a second or more to
import, and programs that never use it (tests on ScriptedModel, ``glove-mcp --help``) should
not pay for it.
"""

from typing import TYPE_CHECKING, Any

from glove_core.models.base import ModelAdapter as ModelAdapter
from glove_core.models.base import ModelRequest as ModelRequest
from glove_core.models.base import ModelResponse as ModelResponse
from glove_core.models.openai_compat import OpenAICompatModel as OpenAICompatModel
from glove_core.models.retry import RetryPolicy as RetryPolicy
from glove_core.models.scripted import ScriptedModel as ScriptedModel

if TYPE_CHECKING:
    from glove_core.models.anthropic import AnthropicModel as AnthropicModel
    from glove_core.models.anthropic import CacheTTL as CacheTTL

__all__ = [
    "AnthropicModel",
    "CacheTTL",
    "ModelAdapter",
    "ModelRequest",
    "ModelResponse",
    "OpenAICompatModel",
    "RetryPolicy",
    "ScriptedModel",
]


def __getattr__(name: str) -> Any:
    if name in ("AnthropicModel", "CacheTTL"):
        from glove_core.models import anthropic

        return getattr(anthropic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
