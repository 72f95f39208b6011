#!/usr/bin/env bash
# Install the pinned FastMCP (requirements.txt) into tests/interop/fastmcp/.venv, a virtualenv
# of its own: FastMCP's dependencies must not change the project's. FastMCP with its tasks
# extension (requirements-tasks.txt) goes into tasks/.venv: the two pins cannot share one venv.
# Idempotent: a second run with unchanged requirements does nothing.
set -euo pipefail
cd "$(dirname "$0")"
python="${PYTHON:-python3}"
install() {  # install REQUIREMENTS VENV
  local stamp="$2/.glove-requirements.sha256" want
  want=$(sha256sum "$1" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$2/bin/python" ]; then
    return 0
  fi
  "$python" -m venv "$2"
  "$2/bin/python" -m pip install --quiet --disable-pip-version-check -r "$1"
  "$2/bin/python" -c "import fastmcp" >/dev/null
  echo "$want" > "$stamp"
}
install requirements.txt .venv
mkdir -p tasks
install requirements-tasks.txt tasks/.venv
