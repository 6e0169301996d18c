#!/usr/bin/env bash
# The README's test command: installs what the tests need (the fakellm mock server's package;
# the MCP servers reins-mcp's tests start: mcp-server-time, @modelcontextprotocol/server-everything;
# cmake, clang and libclang-dev for llama.cpp; PostgreSQL, started on loopback by
# scripts/with-postgres.sh; the servers of scripts/install/), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- fakellm: an independent OpenAI/Anthropic-compatible mock server, started by the tests.
if ! command -v fakellm >/dev/null 2>&1; then
  echo "== installing fakellm (python3 -m pip)"
  python3 -m pip install --quiet --disable-pip-version-check fakellm
  hash -r
fi
if ! command -v fakellm >/dev/null 2>&1; then
  # pip may install scripts outside PATH: point the tests at it.
  FAKELLM="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/fakellm"
  [[ -x "$FAKELLM" ]] || FAKELLM="$(python3 -m site --user-base)/bin/fakellm"
  export FAKELLM
fi

# --- MCP servers for reins-mcp's tests (crates/reins-mcp/tests/it): mcp-server-time (PyPI),
# run as `python3 -m mcp_server_time`, and @modelcontextprotocol/server-everything (npm),
# installed under .tools/npm (git-ignored).
if ! python3 -c 'import mcp_server_time' >/dev/null 2>&1; then
  echo "== installing mcp-server-time (python3 -m pip)"
  python3 -m pip install --quiet --disable-pip-version-check mcp-server-time
fi
if [[ ! -f .tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js ]]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "== installing nodejs, npm (apt-get)"
    if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  echo "== installing @modelcontextprotocol/server-everything (npm, into .tools/npm)"
  npm install --silent --no-audit --no-fund --prefix .tools/npm @modelcontextprotocol/server-everything
fi

# --- llama.cpp: the local model builds it from source (cmake; libclang for bindgen). The
# tests fetch the model through pip themselves, into the user's cache directory.
if ! dpkg -s cmake clang libclang-dev >/dev/null 2>&1; then
  echo "== installing cmake, clang, libclang-dev (apt-get)"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake clang libclang-dev >/dev/null
fi

# --- Engines and servers other crates' tests start, each installed once by its own script.
scripts/install/restate.sh   # @restatedev/restate-server (npm) into .tools/npm: reins-restate

scripts/with-postgres.sh cargo test --workspace --features reins/postgres,reins/local "$@"
