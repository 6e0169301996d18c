#!/usr/bin/env bash
# Installs the Restate server (npm package @restatedev/restate-server, which ships the
# `restate-server` binary) into .tools/npm, for reins-restate's tests, example and bench.
# Idempotent: does nothing when the binary is already there. Tests find it at
# .tools/npm/node_modules/.bin/restate-server or through $RESTATE_SERVER. The tests of
# signed requests make the server's key with `openssl`, installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
if ! command -v openssl >/dev/null 2>&1; then
  echo "== installing openssl (apt-get)"
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
fi

if [[ -x .tools/npm/node_modules/.bin/restate-server ]]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "== installing nodejs, npm (apt-get)"
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
echo "== installing @restatedev/restate-server (npm, into .tools/npm)"
npm install --silent --no-audit --no-fund --prefix .tools/npm @restatedev/restate-server
