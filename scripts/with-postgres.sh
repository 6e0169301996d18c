#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster on a free loopback port, named by
# REINS_POSTGRES_URL; installs PostgreSQL from Debian's packages when it is missing.
# The cluster also serves TLS, with a certificate signed by a throwaway root made here by
# openssl (which Debian's PostgreSQL depends on): REINS_POSTGRES_TLS_URL names a user whose
# connections must use TLS (pg_hba: hostssl only, a password), REINS_POSTGRES_ROOT_CERT the
# root certificate (PEM) to trust.
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

# --- TLS: a root certificate and the server's, valid for 127.0.0.1 and localhost.
TLS_DIR="$PG_DIR/tls"
mkdir -p "$TLS_DIR"
cat >"$TLS_DIR/openssl.cnf" <<'CNF'
[req]
distinguished_name = name
[name]
[root]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
CNF
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=reins test root" -config "$TLS_DIR/openssl.cnf" -extensions root \
  -keyout "$TLS_DIR/root.key" -out "$TLS_DIR/root.pem" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj "/CN=127.0.0.1" -config "$TLS_DIR/openssl.cnf" \
  -keyout "$TLS_DIR/server.key" -out "$TLS_DIR/server.csr" 2>/dev/null
openssl x509 -req -in "$TLS_DIR/server.csr" -CA "$TLS_DIR/root.pem" -CAkey "$TLS_DIR/root.key" \
  -CAcreateserial -days 2 -extfile "$TLS_DIR/openssl.cnf" -extensions server \
  -out "$TLS_DIR/server.pem" 2>/dev/null
chmod 600 "$TLS_DIR/server.key"
[[ $(id -u) -eq 0 ]] && chown -R postgres "$TLS_DIR"
# reins (the tests' administrator) may connect in clear text; reins_tls only over TLS.
cat >"$PG_DIR/data/pg_hba.conf" <<'HBA'
local   all all                    trust
hostssl all reins_tls 127.0.0.1/32 scram-sha-256
host    all reins     127.0.0.1/32 trust
HBA

pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c ssl=on \
      -c ssl_cert_file=$TLS_DIR/server.pem -c ssl_key_file=$TLS_DIR/server.key" start >/dev/null
"$PG_BIN/psql" -q -h "$PG_DIR" -p "$PG_PORT" -U reins -d postgres \
  -c "CREATE ROLE reins_tls LOGIN SUPERUSER PASSWORD 'reins-tls-password'" >/dev/null
stop_postgres() {
  pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap stop_postgres EXIT
# Clear text, as before the server had TLS: the tests' timings stay what they were.
export REINS_POSTGRES_URL="host=127.0.0.1 port=$PG_PORT user=reins dbname=postgres sslmode=disable"
export REINS_POSTGRES_TLS_URL="host=127.0.0.1 port=$PG_PORT user=reins_tls password=reins-tls-password dbname=postgres"
export REINS_POSTGRES_ROOT_CERT="$TLS_DIR/root.pem"
echo "== PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT"

"$@"

