"""Model adapters."""

from glove_core.models.base import ModelAdapter as ModelAdapter
from glove_core.models.base import ModelRequest as ModelRequest
from glove_core.models.base import ModelResponse as ModelResponse
from glove_core.models.scripted import ScriptedModel as ScriptedModel

__all__ = ["ModelAdapter", "ModelRequest", "ModelResponse", "ScriptedModel"]
