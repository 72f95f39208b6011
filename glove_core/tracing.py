"""OpenTelemetry spans and metrics of the agent, named after the GenAI semantic conventions.

The library depends on ``opentelemetry-api`` only: without an SDK configured every tracer and
meter here is a no-op, and the loop does not even create the no-op spans (``tracing_on`` is one
``isinstance`` check), so an application that does not trace pays nothing measurable. With an
SDK (``opentelemetry-sdk``, or ``glove-mcp`` with the ``otel`` extra) a request becomes::

    invoke_agent                       one request or event wake-up (a turn) of a Glove
    ├── chat {model}                   each model call: provider, model, tokens, finish reason
    ├── execute_tool {name}            each tool call: call id, status
    │   └── tools/call {tool}          (glove_mcp) the MCP client span of a bridged tool
    └── compaction                     when the history was compacted

Names and attributes follow the OpenTelemetry GenAI semantic conventions as published in
``open-telemetry/semantic-conventions-genai`` (see ``SEMCONV``), which now also holds the MCP
conventions that ``glove_mcp`` follows.

Content (the user's request, the final answer, tool arguments and results) is recorded only
when the application opts in with the conventions' setting,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (``true``, ``span_only`` or
``span_and_event``), read when a span starts. Tokens, keys and URL credentials never are.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Literal, Protocol

from opentelemetry import metrics, trace
from opentelemetry.trace import ProxyTracerProvider, Span, SpanKind, StatusCode
from opentelemetry.util.types import AttributeValue

from glove_core.abort import AbortError
from glove_core.types import ToolCall, Usage

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "SEMCONV",
    "TOOL_STATUS",
    "Attr",
    "ChatCall",
    "agent_span",
    "capture_content",
    "chat_span",
    "error_type",
    "in_recording_span",
    "internal_span",
    "meter",
    "record_chat",
    "record_error",
    "record_tool",
    "record_turn",
    "split_model_name",
    "tool_span",
    "tracer",
    "tracing_on",
]

SEMCONV = "OpenTelemetry semantic-conventions-genai v0.1.0 (GenAI and MCP, status Development)"
"""The version of the conventions these names follow (named in docs/observability.md)."""

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' opt-in for recording prompts, answers, tool arguments and results."""

_CAPTURE_VALUES = frozenset({"true", "1", "yes", "span_only", "span_and_event"})

# Module-level proxies, as every OpenTelemetry instrumentation keeps them: they hold no state
# of ours and start delegating to the SDK's provider as soon as the application sets one.
_TRACER = trace.get_tracer("glove_core")
_METER = metrics.get_meter("glove_core")
_NOTHING: nullcontext[None] = nullcontext()


class Attr:
    """Attribute names of the conventions (and the few of our own, under ``glove.``)."""

    OPERATION = "gen_ai.operation.name"
    PROVIDER = "gen_ai.provider.name"
    REQUEST_MODEL = "gen_ai.request.model"
    CONVERSATION = "gen_ai.conversation.id"
    AGENT_NAME = "gen_ai.agent.name"
    INPUT_TOKENS = "gen_ai.usage.input_tokens"
    OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
    CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
    CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
    FINISH_REASONS = "gen_ai.response.finish_reasons"
    TOKEN_TYPE = "gen_ai.token.type"
    TOOL_NAME = "gen_ai.tool.name"
    TOOL_CALL_ID = "gen_ai.tool.call.id"
    TOOL_TYPE = "gen_ai.tool.type"
    TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
    TOOL_RESULT = "gen_ai.tool.call.result"
    INPUT_MESSAGES = "gen_ai.input.messages"
    OUTPUT_MESSAGES = "gen_ai.output.messages"
    ERROR_TYPE = "error.type"
    TURN_KIND = "glove.turn.kind"
    """``request`` (someone sent a message) or ``wake`` (queued events woke the agent)."""
    TOOL_STATUS = "glove.tool.status"
    """How a tool call ended: one of ``TOOL_STATUS``."""
    MODEL_CALLS = "glove.model_calls"


TOOL_STATUS = ("success", "error", "aborted", "switched_off", "refused", "unknown_tool")
"""The values of ``glove.tool.status``; every one but ``success`` is also the ``error.type``."""

_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48)
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)

_OPERATION_DURATION = _METER.create_histogram(
    "gen_ai.client.operation.duration",
    unit="s",
    description="GenAI operation duration.",
    explicit_bucket_boundaries_advisory=list(_DURATION_BUCKETS),
)
_TOKEN_USAGE = _METER.create_histogram(
    "gen_ai.client.token.usage",
    unit="{token}",
    description="Number of input and output tokens used.",
    explicit_bucket_boundaries_advisory=list(_TOKEN_BUCKETS),
)


def tracer() -> trace.Tracer:
    """The tracer of glove_core (a proxy until an SDK is configured)."""
    return _TRACER


def meter() -> metrics.Meter:
    """The meter of glove_core (a proxy until an SDK is configured)."""
    return _METER


def tracing_on() -> bool:
    """Whether an SDK tracer provider is set: without one no span is even started.

    The API's default provider is a ``ProxyTracerProvider`` until ``set_tracer_provider``.
    Asked once per turn (it reads the environment: a few microseconds); the spans inside a
    turn ask ``in_recording_span`` instead.
    """
    return not isinstance(trace.get_tracer_provider(), ProxyTracerProvider)


def in_recording_span() -> bool:
    """Whether the current span records: the check of the spans inside a turn (half a
    microsecond, where starting a no-op span costs several)."""
    return trace.get_current_span().is_recording()


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _Identified(Protocol):
    @property
    def identifier(self) -> str: ...


def capture_content() -> bool:
    """Whether the application opted in to record content (``CAPTURE_CONTENT_ENV``)."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURE_VALUES


def error_type(exc: BaseException) -> str:
    """The ``error.type`` of an exception: a low-cardinality name, never its message (which
    may quote a URL or what a server said)."""
    if isinstance(exc, AbortError):
        return "aborted"
    if isinstance(exc, TimeoutError):
        return "timeout"
    cls = type(exc)
    if cls.__module__ in ("builtins", "asyncio.exceptions"):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def record_error(span: Span, kind: str) -> None:
    """Mark ``span`` failed with ``error.type`` ``kind`` (the status says only the kind)."""
    span.set_attribute(Attr.ERROR_TYPE, kind)
    span.set_status(StatusCode.ERROR, kind)


@contextmanager
def _span(name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue]) -> Iterator[Span]:
    # Our own exception handling: the SDK's would record the exception's message and
    # traceback as an event, and messages may carry what a server or a user wrote.
    with _TRACER.start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as exc:
            record_error(span, error_type(exc))
            raise


def internal_span(
    name: str, attributes: Mapping[str, AttributeValue] | None = None
) -> AbstractContextManager[Span | None]:
    """A span of our own (compaction, discovery); a shared no-op when tracing is off."""
    if not tracing_on():
        return _NOTHING
    return _span(name, SpanKind.INTERNAL, attributes or {})


def agent_span(
    conversation_id: str, kind: Literal["request", "wake"], request_text: str | None = None
) -> AbstractContextManager[Span | None]:
    """The ``invoke_agent`` span of one turn (None when tracing is off)."""
    if not tracing_on():
        return _NOTHING
    attributes: dict[str, AttributeValue] = {
        Attr.OPERATION: "invoke_agent",
        Attr.CONVERSATION: conversation_id,
        Attr.TURN_KIND: kind,
    }
    if request_text is not None and capture_content():
        attributes[Attr.INPUT_MESSAGES] = _messages("user", request_text)
    return _span("invoke_agent", SpanKind.INTERNAL, attributes)


def record_turn(span: Span, text: str, usage: Usage, model_calls: int) -> None:
    """What a finished turn adds to its ``invoke_agent`` span: token totals, the answer when
    content is captured."""
    span.set_attributes(_usage_attributes(usage))
    span.set_attribute(Attr.MODEL_CALLS, model_calls)
    if capture_content():
        span.set_attribute(Attr.OUTPUT_MESSAGES, _messages("assistant", text))


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def split_model_name(name: str) -> tuple[str, str]:
    """``provider:model`` (as ``ModelAdapter.name`` reads) as the provider and the model;
    a name without a provider is the model of provider ``glove``."""
    provider, sep, model = name.partition(":")
    return (provider, model) if sep else ("glove", name)


class ChatCall:
    """The ``chat {model}`` span of one model call and its timing, for the metrics."""

    __slots__ = ("attributes", "span", "started")

    def __init__(self, span: Span, attributes: dict[str, AttributeValue]) -> None:
        self.span = span
        self.attributes = attributes
        self.started = time.perf_counter()


@contextmanager
def _chat(model_name: str, conversation_id: str) -> Iterator[ChatCall]:
    provider, model = split_model_name(model_name)
    base: dict[str, AttributeValue] = {
        Attr.OPERATION: "chat",
        Attr.PROVIDER: provider,
        Attr.REQUEST_MODEL: model,
    }
    attributes = {**base, Attr.CONVERSATION: conversation_id}
    with _TRACER.start_as_current_span(
        f"chat {model}",
        kind=SpanKind.CLIENT,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        call = ChatCall(span, base)
        try:
            yield call
        except BaseException as exc:
            kind = error_type(exc)
            record_error(span, kind)
            _OPERATION_DURATION.record(
                time.perf_counter() - call.started, {**base, Attr.ERROR_TYPE: kind}
            )
            raise


def chat_span(model: _Named, store: _Identified) -> AbstractContextManager[ChatCall | None]:
    """The ``chat {model}`` span around one model call of a turn (None outside a recording
    span); finish it with ``record_chat``."""
    if not in_recording_span():
        return _NOTHING
    return _chat(model.name, store.identifier)


def record_chat(call: ChatCall, usage: Usage, finish_reason: str | None) -> None:
    """Token usage and finish reason of a finished model call, on its span and as the
    ``gen_ai.client.operation.duration`` and ``gen_ai.client.token.usage`` metrics.

    Cache reads and writes are their own ``gen_ai.token.type`` values (``cache_read``,
    ``cache_write``); ``input`` counts every input token, cached ones included, as the
    conventions ask (our ``Usage.input_tokens`` counts the uncached ones only).
    """
    span = call.span
    span.set_attributes(_usage_attributes(usage))
    if finish_reason:
        span.set_attribute(Attr.FINISH_REASONS, (finish_reason,))
    base = call.attributes
    _OPERATION_DURATION.record(time.perf_counter() - call.started, base)
    for token_type, count in (
        ("input", _all_input(usage)),
        ("output", usage.output_tokens),
        ("cache_read", usage.cache_read_tokens),
        ("cache_write", usage.cache_write_tokens),
    ):
        if count or token_type in ("input", "output"):
            _TOKEN_USAGE.record(count, {**base, Attr.TOKEN_TYPE: token_type})


def _all_input(usage: Usage) -> int:
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def _usage_attributes(usage: Usage) -> dict[str, AttributeValue]:
    return {
        Attr.INPUT_TOKENS: _all_input(usage),
        Attr.OUTPUT_TOKENS: usage.output_tokens,
        Attr.CACHE_READ_TOKENS: usage.cache_read_tokens,
        Attr.CACHE_WRITE_TOKENS: usage.cache_write_tokens,
    }


def tool_span(call: ToolCall) -> AbstractContextManager[Span | None]:
    """The ``execute_tool {name}`` span of one tool call of a turn (None outside a recording
    span); finish it with ``record_tool``."""
    if not in_recording_span():
        return _NOTHING
    attributes: dict[str, AttributeValue] = {
        Attr.OPERATION: "execute_tool",
        Attr.TOOL_NAME: call.name,
        Attr.TOOL_CALL_ID: call.id,
        Attr.TOOL_TYPE: "function",
    }
    if capture_content():
        attributes[Attr.TOOL_ARGUMENTS] = json.dumps(dict(call.input), default=str)
    return _span(f"execute_tool {call.name}", SpanKind.INTERNAL, attributes)


def record_tool(span: Span, status: str, result: object = None) -> None:
    """How a tool call ended (one of ``TOOL_STATUS``); the result when content is captured."""
    span.set_attribute(Attr.TOOL_STATUS, status)
    if status != "success":
        record_error(span, status)
    elif result is not None and capture_content():
        span.set_attribute(Attr.TOOL_RESULT, json.dumps(result, default=str))
