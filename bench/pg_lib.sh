# Sourced by bench/pg.sh and bench/pg_write.sh: a throwaway PostgreSQL cluster and a
# `triad serve` on it, as root. The caller sets PGBIN (PostgreSQL's bin directory), PGROOT
# (an empty directory of its own, removed at the end) and TRIAD, and makes `pg_cleanup`
# its EXIT trap, which stops both and removes PGROOT whatever happened.

SERVER_PID=

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
  local cpu=$1 port opts=""
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

# server_start CPU DATABASE LOG: `triad serve` pinned to CPU on DATABASE with no rate
# limits (the load generator is one client), its log to LOG; sets SERVER_PID and URL.
server_start() {
  local cpu=$1 database=$2 log=$3
  rm -f "$PGROOT/server.out"
  URL=
  TRIAD_KEY_FILE=/nonexistent TRIAD_LOG=warn taskset -c "$cpu" "$TRIAD" serve \
    --addr 127.0.0.1:0 --database "$database" \
    --rate-per-ip 1000000000 --rate-per-address 1000000000 --rate-burst 1000000000 --ws-rate 1000000000 \
    --max-connections-per-ip 1000000000 --max-websockets-per-ip 1000000000 --replay-events-per-ip 1000000000 \
    >"$PGROOT/server.out" 2>"$log" &
  SERVER_PID=$!
  for _ in $(seq 300); do
    URL=$(sed -n 's/^Triad is listening on \(http:[^ ]*\).*/\1/p' "$PGROOT/server.out" | head -1)
    [ -n "$URL" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.1
  done
  echo "the server did not start" >&2; return 1
}

server_stop() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=
}
