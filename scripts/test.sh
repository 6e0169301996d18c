#!/usr/bin/env bash
# The README's test command: installs what the tests need (the fakellm mock server's package;
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

# --- llama.cpp: the local model builds it from source (cmake; libclang for bindgen). The
# tests fetch the model through pip themselves, into the user's cache directory.
if ! dpkg -s cmake clang libclang-dev >/dev/null 2>&1; then
  echo "== installing cmake, clang, libclang-dev (apt-get)"
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo -n); fi
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake clang libclang-dev >/dev/null
fi

# --- Engines and servers other crates' tests start, each installed once by its own script.
scripts/install/mcp.sh       # mcp-server-time (pip); MCP servers and the Inspector (npm): reins-mcp
scripts/install/restate.sh   # @restatedev/restate-server (npm) into .tools/npm: reins-restate, reins-cli
scripts/install/phoenix.sh   # arize-phoenix (pip, a venv in .tools/phoenix): reins-otel
scripts/install/chromium.sh  # chromium, chromium-driver, tmux (apt-get): reins-cli, reins

scripts/with-postgres.sh cargo test --workspace --features reins/postgres,reins/local "$@"
