#!/usr/bin/env bash
# Install headless Chromium from Debian's packages for the browser tests (tests/browser/).
# Idempotent: does nothing when /usr/bin/chromium is there. Needs root (apt-get).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium
