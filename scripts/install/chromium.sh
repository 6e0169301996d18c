#!/usr/bin/env bash
# Installs what the web inbox's browser test (crates/reins-cli/tests/it/ui.rs) drives:
# Debian's chromium and chromium-driver (chromedriver). Idempotent: skips what is installed.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
echo "== installing chromium, chromium-driver (apt-get)"
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
