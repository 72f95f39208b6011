"""The OpenTelemetry SDK for tests: spans into an in-memory exporter, metrics into an in-memory
reader, installed once per process (the API allows one global provider per process).

A test module imports this after ``pytest.importorskip("opentelemetry.sdk")``, so the default
install (``.[test]`` has the SDK) runs it and an install without it skips, saying why.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

__all__ = [
    "Telemetry",
    "all_attribute_values",
    "attrs",
    "metric_attribute_values",
    "parent_of",
    "sid",
    "telemetry",
]


class _WhileCollecting(SpanProcessor):
    """Passes spans on only while a test collects them: the other tests of the process leave
    nothing behind."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner
        self.on = False
        self.listeners: list[Callable[[], None]] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if self.on:
            self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            self.inner.on_end(span)
            for notify in list(self.listeners):
                notify()

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class Telemetry:
    """What a test reads: finished spans, metric points."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.gate = _WhileCollecting(SimpleSpanProcessor(self.exporter))
        provider = TracerProvider()
        provider.add_span_processor(self.gate)
        trace.set_tracer_provider(provider)
        self.reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[self.reader]))

    @contextmanager
    def collect(self) -> Iterator[Telemetry]:
        """Record the spans ended inside the block (and only those)."""
        self.exporter.clear()
        self.gate.on = True
        try:
            yield self
        finally:
            self.gate.on = False

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str, kind: SpanKind | None = None) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name and kind in (None, s.kind)]

    def one(self, name: str, kind: SpanKind | None = None) -> ReadableSpan:
        found = self.named(name, kind)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.names()}"
        return found[0]

    async def wait_for(
        self, found: Callable[[list[ReadableSpan]], bool], within: float = 10
    ) -> None:
        """Wait (at most ``within`` seconds) until ``found(spans)`` holds for the spans ended so
        far: a span ends a moment after the work it covers answered."""
        loop = asyncio.get_running_loop()
        ended = asyncio.Event()

        def notify() -> None:
            loop.call_soon_threadsafe(ended.set)

        self.gate.listeners.append(notify)
        try:
            async with asyncio.timeout(within):
                while not found(self.spans()):
                    await ended.wait()
                    ended.clear()
        finally:
            self.gate.listeners.remove(notify)

    def names(self) -> list[str]:
        return [s.name for s in self.spans()]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.parent is not None and s.parent.span_id == _id(parent)]

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """Every data point of ``metric`` so far (attributes, point), across tests."""
        data = self.reader.get_metrics_data()
        found: list[tuple[dict[str, Any], Any]] = []
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found.extend((dict(p.attributes or {}), p) for p in m.data.data_points)
        return found


def attrs(span: ReadableSpan) -> dict[str, Any]:
    """The span's attributes, as a plain dict."""
    return dict(span.attributes or {})


def sid(span: ReadableSpan) -> int:
    """The span's id."""
    return _id(span)


def _id(span: ReadableSpan) -> int:
    context = span.context
    assert context is not None
    span_id: int = context.span_id
    return span_id


def parent_of(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> ReadableSpan | None:
    """The span among ``spans`` that is ``span``'s parent."""
    if span.parent is None:
        return None
    return next((s for s in spans if _id(s) == span.parent.span_id), None)


def metric_attribute_values(reader: InMemoryMetricReader) -> list[str]:
    """Every attribute value of every metric point the reader holds, as text."""
    out: list[str] = []
    data = reader.get_metrics_data()
    if data is None:
        return out
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for m in scope.metrics:
                for point in m.data.data_points:
                    out.extend(str(v) for v in (point.attributes or {}).values())
    return out


def all_attribute_values(spans: Iterable[ReadableSpan]) -> list[str]:
    """Every attribute value and event attribute value of ``spans``, as text."""
    out: list[str] = []
    for span in spans:
        out.extend(str(v) for v in (span.attributes or {}).values())
        out.append(span.name)
        if span.status.description:
            out.append(span.status.description)
        for event in span.events:
            out.extend(str(v) for v in (event.attributes or {}).values())
    return out


@functools.cache
def telemetry() -> Telemetry:
    """The process's SDK, installed at the first call."""
    return Telemetry()
