#!/usr/bin/env bash
# Installs what reins-cli's interactive tests drive (crates/reins-cli/tests/it): Debian's
# chromium and chromium-driver (chromedriver) for the web inbox's browser test, and tmux for
# the terminal-approval tests. Idempotent: skips what is installed.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
echo "== installing ${missing[*]} (apt-get)"
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
