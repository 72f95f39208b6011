#!/usr/bin/env bash
# Install the pinned FastMCP and the OpenTelemetry SDK and OTLP/HTTP exporter
# (requirements.txt) into tests/interop/fastmcp_otel/.venv, a virtualenv of its own: FastMCP's
# dependencies must not change the project's. Idempotent: with the same requirements it does
# nothing.
set -euo pipefail
cd "$(dirname "$0")"
stamp=.venv/.glove-requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x .venv/bin/python ]; then
  exit 0
fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt
.venv/bin/python -c "import fastmcp, opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http" >/dev/null
echo "$want" > "$stamp"
