#!/usr/bin/env bash
# The README's main job: `reins run` on the offline example agent
# (crates/reins-cli/agents/offline-assistant.toml — the local model, an MCP server's tools, a
# note written only after you approve it in the terminal). Installs what is missing first:
# cmake, clang and libclang-dev (llama.cpp's build) with apt-get, mcp-server-time with pip.
# Arguments are passed on to `reins run`: a prompt, `--model path/to/model.gguf`, `--json`.
# The note lands in notes.txt in the directory you run this from.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

if ! dpkg -s cmake clang libclang-dev >/dev/null 2>&1; then
  echo "== installing cmake, clang, libclang-dev (apt-get)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake clang libclang-dev >/dev/null
fi

if ! python3 -c 'import mcp_server_time' >/dev/null 2>&1; then
  echo "== installing mcp-server-time (python3 -m pip)"
  python3 -m pip install --quiet --disable-pip-version-check mcp-server-time
fi

(cd "$repo" && cargo build --release --quiet -p reins-cli)
# cargo builds into CARGO_TARGET_DIR when it is set: run the binary it just built, not an old one.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
exec "$target/release/reins" run "$repo/crates/reins-cli/agents/offline-assistant.toml" "$@"
