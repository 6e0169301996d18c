#!/usr/bin/env bash
# The README's test command: installs and starts what the tests talk to (the fakellm mock
# server's package, a PostgreSQL cluster on loopback), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

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

# --- PostgreSQL: a throwaway cluster on a free loopback port, for the PostgreSQL run store.
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
if [[ -z "$(pg_bin)" ]]; then
  echo "== installing PostgreSQL (apt-get)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PG_BIN="$(pg_bin)"
PG_DIR="$(mktemp -d /tmp/reins-pg.XXXXXX)"
PG_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
pg_as_owner() {
  # PostgreSQL refuses to run as root: run it as the postgres user then.
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[[ $(id -u) -eq 0 ]] && chown postgres "$PG_DIR"
pg_as_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U reins >/dev/null
pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
stop_postgres() {
  pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap stop_postgres EXIT
export REINS_POSTGRES_URL="host=127.0.0.1 port=$PG_PORT user=reins dbname=postgres"
echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT"

cargo test --workspace --features reins/postgres "$@"
