# Sourced by bench/pg.sh and bench/pg_write.sh: a throwaway PostgreSQL cluster and a
# `triad serve` on it (`node_lib.sh`), as root. The caller sets PGBIN (PostgreSQL's bin
# directory), PGROOT (an empty directory of its own, removed at the end) and TRIAD, and
# makes `pg_cleanup` its EXIT trap, which stops both and removes PGROOT whatever happened.

# shellcheck source=bench/node_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/node_lib.sh"

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
