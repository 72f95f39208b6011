#!/usr/bin/env bash
# Install the pinned FastMCP (requirements.txt) into tests/interop/fastmcp/.venv, a virtualenv
# of its own: FastMCP's dependencies must not change the project's.
# Idempotent: a second run with unchanged requirements does nothing.
set -euo pipefail
cd "$(dirname "$0")"
stamp=.venv/.glove-requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x .venv/bin/python ]; then
  exit 0
fi
python="${PYTHON:-python3}"
"$python" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
.venv/bin/python -c "import fastmcp" >/dev/null
echo "$want" > "$stamp"
