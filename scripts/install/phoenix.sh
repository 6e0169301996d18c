#!/usr/bin/env bash
# Installs Arize Phoenix (an OTLP trace viewer for LLM apps) into a venv under .tools/phoenix,
# for the reins-otel tests. Idempotent: a no-op when the venv already has the `phoenix` module.
# The tests find it through REINS_PHOENIX_PYTHON (set it to another interpreter to reuse an
# install) or at .tools/phoenix/bin/python.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.tools/phoenix
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import phoenix.server.main" 2>/dev/null; then
  exit 0
fi
echo "== installing arize-phoenix (python3 -m pip, into $venv)"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check arize-phoenix
