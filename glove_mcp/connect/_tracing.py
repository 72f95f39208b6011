"""Spans and the ``mcp.client.operation.duration`` metric of one connection's requests, after
the MCP semantic conventions (``glove_core.tracing.SEMCONV``).

A request is a CLIENT span ``{mcp.method.name} {target}`` (the target a tool or prompt name;
never a resource URI, which is high-cardinality and may carry anything) made in the caller's
task, so the SDK's own ``MCP send …`` span, and the W3C trace context it injects into the
request's ``_meta`` (SEP-414, HTTP and stdio alike), are its children: the server's span joins
the caller's trace under ours. A request the server sends us (sampling, elicitation) is a
SERVER span whose parent is the context the server put in that request's ``_meta``.

Never recorded: arguments, results (unless content capture is on, see
``glove_core.tracing.capture_content``), the URL's path, query or credentials (only host and
port, as ``server.address``/``server.port``), any header.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.propagate import extract
from opentelemetry.trace import Span, SpanKind, StatusCode
from opentelemetry.util.types import AttributeValue

from glove_core.tracing import Attr, error_type, tracing_on
from glove_mcp.errors import McpProtocolError

__all__ = [
    "MCP_METHOD",
    "MCP_PROTOCOL_VERSION",
    "MCP_SERVER_ID",
    "MCP_SESSION_ID",
    "McpRequestSpan",
    "detach_ambient",
    "mcp_error_type",
    "peer_attributes",
    "request_span",
    "server_request_span",
]

MCP_METHOD = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_SERVER_ID = "glove.mcp.server.id"
"""Our own: the catalogue id (namespace) of the server, low-cardinality and never secret."""

_TRACER = trace.get_tracer("glove_mcp")
_METER = metrics.get_meter("glove_mcp")
_DURATION = _METER.create_histogram(
    "mcp.client.operation.duration",
    unit="s",
    description="The duration of the MCP request as observed on the sender.",
    explicit_bucket_boundaries_advisory=[
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300
    ],
)  # fmt: skip


def peer_attributes(namespace: str, url: str) -> dict[str, AttributeValue]:
    """The attributes every request of a connection carries: server id, transport, host and
    port (from a URL: never its user-info, path or query)."""
    attributes: dict[str, AttributeValue] = {MCP_SERVER_ID: namespace}
    if not url:
        attributes["network.transport"] = "pipe"
        return attributes
    attributes["network.transport"] = "tcp"
    attributes["network.protocol.name"] = "http"
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return attributes
    if host:
        attributes["server.address"] = host
        attributes["server.port"] = port or (443 if parts.scheme == "https" else 80)
    return attributes


def mcp_error_type(exc: BaseException) -> str:
    """``error.type`` of a failed request: the JSON-RPC code when the server answered with an
    error, else a low-cardinality name (``timeout``, the exception's class)."""
    if isinstance(exc, McpProtocolError):
        return str(exc.code)
    return error_type(exc)


class McpRequestSpan:
    """One request's span (None when tracing is off) and what ends it."""

    __slots__ = ("attributes", "span")

    def __init__(self, span: Span | None, attributes: dict[str, AttributeValue]) -> None:
        self.span = span
        self.attributes = attributes

    def set(self, key: str, value: AttributeValue | None) -> None:
        """Add an attribute to the span and the duration metric (low-cardinality only)."""
        if value is None:
            return
        self.attributes[key] = value
        if self.span is not None:
            self.span.set_attribute(key, value)

    def rename(self, method: str) -> None:
        """The request turned out to be ``method`` (a handshake: discover or initialize)."""
        self.set(MCP_METHOD, method)
        if self.span is not None:
            self.span.update_name(method)

    def fail(self, kind: str) -> None:
        """The request failed (or a tool answered ``isError``: ``tool_error``)."""
        self.set(Attr.ERROR_TYPE, kind)
        if self.span is not None:
            self.span.set_status(StatusCode.ERROR, kind)


@contextmanager
def request_span(
    method: str,
    target: str | None,
    peer: Mapping[str, AttributeValue],
    extra: Mapping[str, AttributeValue] | None = None,
) -> Iterator[McpRequestSpan]:
    """The CLIENT span of one MCP request and its ``mcp.client.operation.duration``."""
    attributes: dict[str, AttributeValue] = {MCP_METHOD: method, **peer}
    if method == "tools/call" and target is not None:
        attributes[Attr.TOOL_NAME] = target
        attributes[Attr.OPERATION] = "execute_tool"
    elif method == "prompts/get" and target is not None:
        attributes["gen_ai.prompt.name"] = target
    if extra:
        attributes.update(extra)
    started = time.perf_counter()
    # The duration is recorded whether or not anyone traces; the span only when someone does.
    span_of: AbstractContextManager[Span | None] = (
        _TRACER.start_as_current_span(
            f"{method} {target}" if target else method,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        )
        if tracing_on()
        else nullcontext()
    )
    with span_of as span:
        request = McpRequestSpan(span, dict(attributes))
        try:
            yield request
        except BaseException as exc:
            request.fail(mcp_error_type(exc))
            raise
        finally:
            _DURATION.record(time.perf_counter() - started, request.attributes)


@contextmanager
def server_request_span(method: str, server: str, meta: Mapping[str, Any] | None) -> Iterator[None]:
    """The SERVER span of a request the MCP server sent us (``sampling/createMessage``,
    ``elicitation/create``), a child of the trace context in its ``_meta`` when it has one."""
    if not tracing_on():
        yield
        return
    parent = extract(dict(meta)) if meta and "traceparent" in meta else None
    with _TRACER.start_as_current_span(
        method,
        context=parent,
        kind=SpanKind.SERVER,
        attributes={MCP_METHOD: method, MCP_SERVER_ID: server},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield
        except BaseException as exc:
            span.set_attribute(Attr.ERROR_TYPE, error_type(exc))
            span.set_status(StatusCode.ERROR, error_type(exc))
            raise


def detach_ambient() -> None:
    """Leave the current task with no current span: a session's owner task, once its handshake
    ran under the caller's span, must not parent everything it does for the rest of its life
    to that span."""
    otel_context.attach(otel_context.Context())
