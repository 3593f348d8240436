# Sourced by bench/pg.sh, bench/pg_write.sh and bench/reads.sh: a throwaway PostgreSQL
# cluster and a `triad serve` on it (`node_lib.sh`), as root. The caller runs `pg_require`
# (which sets PGBIN, PostgreSQL's bin directory), sets PGROOT (an empty directory of its
# own, removed at the end) and TRIAD, and makes `pg_cleanup` its EXIT trap, which stops
# both and removes PGROOT whatever happened.

# shellcheck source=bench/node_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/node_lib.sh"

# pg_require [TOOL …]: exits with what to do unless this runs as root with PostgreSQL
# installed and runuser, psql and each TOOL on the PATH; sets PGBIN (the newest
# PostgreSQL's bin directory).
pg_require() {
  local tool
  [ "$(id -u)" = 0 ] || { echo "run as root: PostgreSQL is started as the postgres user" >&2; exit 1; }
  for tool in runuser psql "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }
  done
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$PGBIN/initdb" ] || { echo "no PostgreSQL: apt-get install -y postgresql" >&2; exit 1; }
}

pg_cleanup() {
  server_stop
  if [ -f "$PGROOT/data/postmaster.pid" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGROOT/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$PGROOT"
}

# pg_start CPU [OPTION …]: a cluster in PGROOT on a free port, pinned to CPU, durable as
# shipped, with each OPTION as a `postgres -c` setting; sets PGURL.
pg_start() {
  local cpu=$1 port o opts=""
  shift
  for o in "$@"; do opts+=" -c $o"; done
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  chown postgres: "$PGROOT"
  runuser -u postgres -- "$PGBIN/initdb" -D "$PGROOT/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  taskset -c "$cpu" runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGROOT/data" -l "$PGROOT/log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$PGROOT -c fsync=on -c synchronous_commit=on$opts" \
    start >/dev/null
  PGURL=postgres://postgres@127.0.0.1:$port
}
