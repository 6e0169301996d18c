#!/usr/bin/env bash
# Installs the MCP programs reins-mcp's tests start (crates/reins-mcp/tests/it):
#   mcp-server-time (PyPI), run as `python3 -m mcp_server_time`;
#   @modelcontextprotocol/server-everything, @modelcontextprotocol/server-filesystem and
#   @modelcontextprotocol/inspector (npm), into .tools/npm (git-ignored).
# Idempotent: each step is skipped when its program is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import mcp_server_time' >/dev/null 2>&1; then
  echo "== installing mcp-server-time (python3 -m pip)"
  python3 -m pip install --quiet --disable-pip-version-check mcp-server-time
fi

npm_packages=(
  "@modelcontextprotocol/server-everything:dist/index.js"
  "@modelcontextprotocol/server-filesystem:dist/index.js"
  "@modelcontextprotocol/inspector:cli/build/cli.js"
)
missing=()
for entry in "${npm_packages[@]}"; do
  package=${entry%%:*}
  file=${entry#*:}
  if [[ ! -f .tools/npm/node_modules/$package/$file ]]; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  if ! command -v npm >/dev/null 2>&1; then
    echo "== installing nodejs, npm (apt-get)"
    if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  echo "== installing ${missing[*]} (npm, into .tools/npm)"
  npm install --silent --no-audit --no-fund --prefix .tools/npm "${missing[@]}"
fi
