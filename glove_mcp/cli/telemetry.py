"""Exporting traces and metrics from the ``glove-mcp`` command, and the HTTP request span of
the headless server — both with the ``otel`` extra (``pip install 'glove-agents[otel]'``).

The library itself depends on ``opentelemetry-api`` only and exports nothing: an application
that traces configures its own SDK. The command does it for its user from the standard
environment variables, so ``glove-mcp chat`` and ``glove-mcp serve`` export with no code:

- it starts when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
  ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``) is set, unless ``OTEL_SDK_DISABLED=true``;
- traces and metrics go over OTLP/HTTP (protobuf); ``OTEL_TRACES_EXPORTER=none`` or
  ``OTEL_METRICS_EXPORTER=none`` turns one off; headers, timeouts, compression, sampler,
  batch sizes and the export interval come from their ``OTEL_*`` variables as the SDK reads
  them; ``OTEL_SERVICE_NAME`` (default ``glove-mcp``) and ``OTEL_RESOURCE_ATTRIBUTES`` name
  the resource.

Without the extra nothing changes (one warning says the variables were ignored).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Telemetry", "configure_from_env", "instrument_asgi"]

logger = logging.getLogger(__name__)

_ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
_QUERY_KEY = "glove.query_string"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Telemetry:
    """The SDK providers the command configured; ``shutdown`` flushes and stops them."""

    shutdowns: list[Callable[[], object]] = field(default_factory=list)

    def shutdown(self) -> None:
        """Export what is buffered and stop (blocking: call it from a thread in async code)."""
        for stop in self.shutdowns:
            try:
                stop()
            except Exception:
                logger.warning("OpenTelemetry: exporting the last spans and metrics failed")


def _setting(name: str) -> str:
    return os.environ.get(name, "").strip().lower()


def configure_from_env(service_name: str = "glove-mcp") -> Telemetry | None:
    """Set the global tracer and meter providers from the ``OTEL_*`` variables, exporting over
    OTLP/HTTP; None (and nothing set) when no endpoint is configured, the SDK is disabled, or
    the ``otel`` extra is not installed."""
    if (
        not any(os.environ.get(name) for name in _ENDPOINTS)
        or _setting("OTEL_SDK_DISABLED") == "true"
    ):
        return None
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but nothing is exported: install the otel "
            "extra (pip install 'glove-agents[otel]')"
        )
        return None
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service_name}
    resource = Resource.create(attributes)
    telemetry = Telemetry()
    if _setting("OTEL_TRACES_EXPORTER") != "none":
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(tracer_provider)
        telemetry.shutdowns.append(tracer_provider.shutdown)
    if _setting("OTEL_METRICS_EXPORTER") != "none":
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        metrics.set_meter_provider(meter_provider)
        telemetry.shutdowns.append(meter_provider.shutdown)
    return telemetry


def instrument_asgi(app: Asgi) -> Asgi:
    """``app`` with a SERVER span per HTTP request (the OpenTelemetry ASGI instrumentation),
    the parent of the turn the request runs; ``app`` itself without the ``otel`` extra.

    The instrumentation never sees a query string (the OAuth callback's ``code`` and ``state``
    travel there): it gets the request without one, and the application gets it back. Its
    per-message ``receive``/``send`` spans are left out (a stream would make thousands).
    """
    try:
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
    except ImportError:
        return app

    async def restore(scope: Scope, receive: Receive, send: Send) -> None:
        if _QUERY_KEY in scope:
            scope = {**scope, "query_string": scope[_QUERY_KEY]}
        await app(scope, receive, send)

    traced = OpenTelemetryMiddleware(restore, exclude_spans=["receive", "send"])

    async def hide_query(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") in ("http", "websocket"):
            scope = {**scope, _QUERY_KEY: scope.get("query_string", b""), "query_string": b""}
        await traced(scope, receive, send)

    return hide_query
