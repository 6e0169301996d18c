#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster on a free loopback port, named by
# REINS_POSTGRES_URL; installs PostgreSQL from Debian's packages when it is missing.
#   scripts/with-postgres.sh cargo bench -p reins --features postgres --bench durable
set -euo pipefail

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

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

"$@"

