#!/usr/bin/env bash
# Install the pinned outside implementations (Node 22, the MCP conformance suite and
# @modelcontextprotocol/server-everything) into tests/interop/node_modules, from the lock file.
# Idempotent: a second run with an unchanged lock file does nothing.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.glove-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x node_modules/node/bin/node ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
# npm 11 runs no install scripts unless package.json allows them; "allowScripts" lets the
# node@22 package fetch its binary from the npm registry.
npm ci --no-audit --no-fund --loglevel=error
node_modules/node/bin/node --version >/dev/null
echo "$want" > "$stamp"
