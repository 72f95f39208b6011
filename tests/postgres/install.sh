#!/usr/bin/env bash
# Install a PostgreSQL server from Debian's packages, for the tests and benchmarks that need a
# real one (glove_core.testing.postgres starts it as an unprivileged user in a temporary
# folder). Idempotent: with the server binaries present it does nothing.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install.sh: PostgreSQL is not installed; run this as root (apt-get install postgresql)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
# The package starts a cluster of its own through the service manager where one runs; the
# tests never use it (they start their own server), so its failure to start is harmless.
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends postgresql >/dev/null
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
