"""A tiny OTLP/HTTP receiver for tests: ``POST /v1/traces`` and ``/v1/metrics`` with protobuf
bodies, decoded with ``opentelemetry-proto`` (the ``otel`` extra) and kept for the test."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = [
    "Receiver",
    "metric_names",
    "otlp_receiver",
    "received_spans",
    "wait_until_received",
]


class Receiver(BaseHTTPRequestHandler):
    """OTLP/HTTP: POST /v1/traces and /v1/metrics, protobuf bodies, decoded and kept."""

    traces: list[Any]
    metrics: list[Any]
    listeners: list[Callable[[], None]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/v1/traces":
            request: Any = ExportTraceServiceRequest()
            request.ParseFromString(body)
            self.traces.append(request)
        elif self.path == "/v1/metrics":
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            self.metrics.append(request)
        for notify in list(self.listeners):
            notify()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, type[Receiver]]]:
    """A receiver on a free loopback port: its endpoint (for ``OTEL_EXPORTER_OTLP_ENDPOINT``)
    and the handler class whose ``traces`` and ``metrics`` fill as exports arrive."""
    handler = type("Handler", (Receiver,), {"traces": [], "metrics": [], "listeners": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def received_spans(requests: list[Any]) -> list[Any]:
    """Every span of the trace exports received."""
    return [
        span
        for request in requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


def metric_names(requests: list[Any]) -> set[str]:
    """The names of the metrics of the metric exports received."""
    return {
        metric.name
        for request in requests
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


async def wait_until_received(
    handler: type[Receiver], found: Callable[[], bool], within: float = 30
) -> None:
    """Wait (at most ``within`` seconds) until ``found()`` holds, looking again at each export
    that arrives: an exporter sends a span some time after the work it covers answered."""
    loop = asyncio.get_running_loop()
    arrived = asyncio.Event()

    def notify() -> None:
        loop.call_soon_threadsafe(arrived.set)

    handler.listeners.append(notify)
    try:
        async with asyncio.timeout(within):
            while not found():
                await arrived.wait()
                arrived.clear()
    finally:
        handler.listeners.remove(notify)
