"""Model adapters."""

from glove_core.models._retry import RetryPolicy as RetryPolicy
from glove_core.models.anthropic import AnthropicModel as AnthropicModel
from glove_core.models.anthropic import CacheTTL as CacheTTL
from glove_core.models.base import ModelAdapter as ModelAdapter
from glove_core.models.base import ModelRequest as ModelRequest
from glove_core.models.base import ModelResponse as ModelResponse
from glove_core.models.openai_compat import OpenAICompatModel as OpenAICompatModel
from glove_core.models.scripted import ScriptedModel as ScriptedModel

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
