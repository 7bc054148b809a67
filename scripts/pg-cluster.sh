#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: created in a temporary folder, listening on
# 127.0.0.1 only (a free port), with a random password, owned by an unprivileged user
# (initdb and postgres refuse to run as root: as root the cluster runs as `postgres`).
#
#   scripts/pg-cluster.sh run CMD…   start a cluster, run CMD with TAPEDECK_TEST_POSTGRES_URL
#                                    set, stop and delete the cluster however CMD ends
#   eval "$(scripts/pg-cluster.sh start)"   start one; prints the exports of
#                                    TAPEDECK_TEST_POSTGRES_URL and TAPEDECK_PG_CLUSTER
#   scripts/pg-cluster.sh stop [DIR] stop and delete the cluster in DIR (default: $TAPEDECK_PG_CLUSTER)
#
# PostgreSQL's binaries: $PG_BIN, else the newest /usr/lib/postgresql/*/bin (Debian's
# `postgresql` package), else initdb on the PATH. Extra server settings: $PG_CLUSTER_OPTIONS
# (e.g. "-c fsync=off" for speed when durability is not what is measured).
set -euo pipefail

die() {
  echo "pg-cluster: $*" >&2
  exit 1
}

pg_bin() {
  if [[ -n "${PG_BIN:-}" ]]; then
    echo "$PG_BIN"
    return
  fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -n "$newest" ]]; then
    echo "$newest"
    return
  fi
  local initdb
  initdb=$(command -v initdb || true)
  [[ -n "$initdb" ]] || die "PostgreSQL is not installed: apt-get install -y postgresql (Debian), or set PG_BIN to the folder holding initdb and pg_ctl."
  dirname "$initdb"
}

# Runs a PostgreSQL binary as the cluster's user: `postgres` when we are root, else ourselves.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    id -u postgres >/dev/null 2>&1 || die "running as root needs the user postgres to own the cluster (Debian's postgresql package creates it; or: useradd --system postgres)."
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  node -e 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

start() {
  local bin dir port password
  bin=$(pg_bin)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/tapedeck-pg-XXXXXX")
  chmod 0700 "$dir"
  [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
  password=$(node -e 'console.log(require("node:crypto").randomBytes(18).toString("base64url"))')
  # The password file is read by initdb and deleted at once; only the owner may read it meanwhile.
  (umask 077 && printf '%s\n' "$password" >"$dir/pwfile")
  [[ $(id -u) -eq 0 ]] && chown postgres: "$dir/pwfile"
  as_owner "$bin/initdb" -D "$dir/data" -U tapedeck --pwfile="$dir/pwfile" --auth-local=scram-sha-256 --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    die "initdb failed (its output is above)."
  }
  rm -f "$dir/pwfile"
  # A port found free may be taken before postgres binds it: try a few.
  local attempt
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 ${PG_CLUSTER_OPTIONS:-}" start >/dev/null; then
      echo "export TAPEDECK_TEST_POSTGRES_URL=postgres://tapedeck:$password@127.0.0.1:$port/postgres"
      echo "export TAPEDECK_PG_CLUSTER=$dir"
      return
    fi
  done
  cat "$dir/server.log" >&2 || true
  rm -rf "$dir"
  die "PostgreSQL did not start (its log is above)."
}

stop() {
  local dir=${1:-${TAPEDECK_PG_CLUSTER:-}}
  [[ -n "$dir" ]] || die "stop needs the cluster's folder (or TAPEDECK_PG_CLUSTER)."
  [[ -d "$dir/data" ]] || die "$dir holds no cluster (no data folder)."
  as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || echo "pg-cluster: the cluster in $dir did not stop cleanly." >&2
  rm -rf "$dir"
}

run() {
  [[ $# -gt 0 ]] || die "run needs a command: scripts/pg-cluster.sh run npm test"
  eval "$(start)"
  trap 'stop "$TAPEDECK_PG_CLUSTER"' EXIT
  "$@"
}

case "${1:-}" in
  start) start ;;
  stop) shift && stop "$@" ;;
  run) shift && run "$@" ;;
  *) die "usage: scripts/pg-cluster.sh start | stop [DIR] | run CMD… (see the comment at the top of the script)" ;;
esac
