#!/usr/bin/env bash
# Install the corpus of published MCP servers the real-server tests mount, pinned: the npm
# packages (and Node 22) from package-lock.json into node_modules, and the Python servers into
# one virtualenv per group from requirements/<group>.txt, every version pinned. The virtualenvs
# live in .realservers/venvs/<group> at the repository's root (outside tests/, whose Python files
# the architecture test reads; the folder ignores itself in git).
# Nothing is downloaded but registry packages; nothing is fetched when the tests run.
# Idempotent: a part whose lock or requirements file is unchanged is left as it is.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3

stamp=node_modules/.glove-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x node_modules/node/bin/node ]; }; then
  command -v npm >/dev/null || { echo "install.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
  # npm 11 runs no install scripts unless package.json allows them; "allowScripts" lets the
  # node@22 package fetch its binary from the npm registry. @playwright/mcp downloads no
  # browser at install (its tests here never start one).
  npm ci --no-audit --no-fund --loglevel=error
  node_modules/node/bin/node --version >/dev/null
  echo "$want" > "$stamp"
fi

venvs=../../.realservers/venvs
mkdir -p "$venvs"
echo '*' > "$venvs/../.gitignore"
for requirements in requirements/*.txt; do
  group=$(basename "$requirements" .txt)
  venv="$venvs/$group"
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ -f "$venv/.glove-requirements.sha256" ] && [ "$(cat "$venv/.glove-requirements.sha256")" = "$want" ]; then
    continue
  fi
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  # Every package pinned, dependencies included: --no-deps installs exactly the list.
  # (A machine's pip configuration may name local indexes that do not exist: its warnings
  # about them are left out; every other line of pip's stderr is shown.)
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    -r "$requirements" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  "$venv/bin/python" -m pip check >/dev/null
  echo "$want" > "$venv/.glove-requirements.sha256"
done
