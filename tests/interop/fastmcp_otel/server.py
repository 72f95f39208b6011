"""A FastMCP server with its OpenTelemetry spans exported over OTLP/HTTP (to
``OTEL_EXPORTER_OTLP_ENDPOINT``), run in FastMCP's own venv (install.sh), never in ours.

``server.py http PORT`` serves Streamable HTTP on 127.0.0.1:PORT; ``server.py stdio`` serves
stdio. One tool, ``forecast(city)``. Spans are exported as each ends (a simple processor), so a
test sees the server's span as soon as the call returned.
"""

from __future__ import annotations

import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "fastmcp-outside"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

# After the provider is set: FastMCP's tracer uses it. Not installed in the project's venv.
from fastmcp import FastMCP  # type: ignore[import-not-found]  # noqa: E402

mcp = FastMCP("outside")


@mcp.tool  # type: ignore[untyped-decorator]
def forecast(city: str) -> str:
    """Tomorrow's weather in ``city``."""
    return f"sunny in {city}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        mcp.run(transport="stdio", show_banner=False)
