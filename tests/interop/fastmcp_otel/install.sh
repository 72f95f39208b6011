#!/usr/bin/env bash
# Install the pinned FastMCP and the OpenTelemetry SDK and OTLP/HTTP exporter
# (requirements.txt) into a virtualenv of its own: FastMCP's dependencies must not change the
# project's. The venv lives outside the checkout (nothing under tests/ but our own code), in
# ${GLOVE_INTEROP_VENVS:-${XDG_CACHE_HOME:-~/.cache}/glove/interop}/fastmcp-otel, where
# tests/interop/test_fastmcp_tracing.py looks. Idempotent: with the same requirements it does
# nothing.
set -euo pipefail
cd "$(dirname "$0")"
venv="${GLOVE_INTEROP_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}/glove/interop}/fastmcp-otel"
stamp="$venv/.glove-requirements.sha256"
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -r requirements.txt
"$venv/bin/python" -c "import fastmcp, opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http" >/dev/null
echo "$want" > "$stamp"
