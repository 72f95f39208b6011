"""Fakes for tests and benchmarks: model APIs served on 127.0.0.1 over real HTTP.

``serve_fake_anthropic()`` runs a fake Anthropic Messages API (JSON and SSE, scripted replies,
injected failures, prompt-cache imitation); ``serve_fake_openai()`` a fake Chat Completions
endpoint. Both record every request. ``PostgresServer`` runs a real PostgreSQL server in a
temporary folder.
"""

from glove_core.testing._script import FakeDrop as FakeDrop
from glove_core.testing._script import FakeError as FakeError
from glove_core.testing._script import FakeItem as FakeItem
from glove_core.testing._script import FakeReply as FakeReply
from glove_core.testing._script import FakeStall as FakeStall
from glove_core.testing._script import FakeToolUse as FakeToolUse
from glove_core.testing._script import Responder as Responder
from glove_core.testing._server import serve_asgi as serve_asgi
from glove_core.testing.fake_anthropic import FakeAnthropicAPI as FakeAnthropicAPI
from glove_core.testing.fake_anthropic import RecordedRequest as RecordedRequest
from glove_core.testing.fake_anthropic import serve_fake_anthropic as serve_fake_anthropic
from glove_core.testing.fake_openai import FakeOpenAIAPI as FakeOpenAIAPI
from glove_core.testing.fake_openai import serve_fake_openai as serve_fake_openai
from glove_core.testing.postgres import PostgresServer as PostgresServer
from glove_core.testing.postgres import PostgresUnavailableError as PostgresUnavailableError
from glove_core.testing.postgres import find_postgres_bin as find_postgres_bin
from glove_core.testing.recorder import RecordingSubscriber as RecordingSubscriber

__all__ = [
    "FakeAnthropicAPI",
    "FakeDrop",
    "FakeError",
    "FakeItem",
    "FakeOpenAIAPI",
    "FakeReply",
    "FakeStall",
    "FakeToolUse",
    "PostgresServer",
    "PostgresUnavailableError",
    "RecordedRequest",
    "RecordingSubscriber",
    "Responder",
    "find_postgres_bin",
    "serve_asgi",
    "serve_fake_anthropic",
    "serve_fake_openai",
]
