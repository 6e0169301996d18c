#!/usr/bin/env bash
# Installs Arize Phoenix (an OTLP trace viewer for LLM apps, PyPI `arize-phoenix`) into a venv
# under .tools/phoenix, for the reins-otel tests. Idempotent and fast when already there: a
# marker file is written only after a complete install. The tests find the `phoenix`
# executable at .tools/phoenix/bin/phoenix, or wherever REINS_PHOENIX points.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.tools/phoenix
marker="$venv/.installed-arize-phoenix"
if [[ -f "$marker" && -x "$venv/bin/phoenix" ]]; then
  exit 0
fi
echo "== installing arize-phoenix (python3 -m pip, into $venv)"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check arize-phoenix
touch "$marker"
