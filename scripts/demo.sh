#!/usr/bin/env bash
# The README's main job: a real LLM agent, offline. Installs what llama.cpp's build needs
# (cmake, clang, libclang-dev) when missing, then runs the `reins` demo; arguments are passed
# on (e.g. a prompt, or `--provider openai`).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

if ! dpkg -s cmake clang libclang-dev >/dev/null 2>&1; then
  echo "== installing cmake, clang, libclang-dev (apt-get)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake clang libclang-dev >/dev/null
fi

cargo run --release -p reins-cli -- "$@"
